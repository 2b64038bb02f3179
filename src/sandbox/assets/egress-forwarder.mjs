// The sandbox's end of the egress bridge, for hosts without socat: listens on
// 127.0.0.1:3128 inside the sandbox's network namespace and pipes every connection to the
// service (a Unix socket path, or host:port for a pod). Run with the host's node binary.
// Usage: node egress-forwarder.mjs <listen host:port> <socket path | host:port>
import net from 'node:net';

const [listen, target] = process.argv.slice(2);
const [host, port] = listen.split(/:(?=\d+$)/);
const remote = target.startsWith('/') ? { path: target } : { host: target.split(/:(?=\d+$)/)[0], port: Number(target.split(/:(?=\d+$)/)[1]) };

net
  .createServer((client) => {
    const upstream = net.connect(remote);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  })
  .listen(Number(port), host);
