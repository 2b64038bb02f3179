// Inside a sandbox: runs an engine's HTTP server and makes it reachable from the host through a
// Unix socket in the sandbox's storage (the sandbox's own network namespace has only a loopback
// the host cannot reach). Starts the server command and learns its loopback port one of two
// ways: a server that picks its own port names it on stdout (`http://127.0.0.1:<port>`); for one
// that prints no address, the command line holds `{{port}}`, which the bridge replaces with a
// free loopback port it picked and then waits for that port to accept connections. Then it
// listens on the socket, pipes each connection to the port, and prints one line
// `{"bridge":"ready","port":N}`. Everything else the server prints passes through; the bridge
// exits with the server.
// Usage: node engine-bridge.mjs <socket path> <command> [args...]
import fs from 'node:fs';
import net from 'node:net';
import readline from 'node:readline';
import { spawn } from 'node:child_process';

const PORT_PLACEHOLDER = '{{port}}';
const [socketPath, command, ...rawArgs] = process.argv.slice(2);

/** A loopback port free right now (the server is told to listen on it). */
const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });

const chosenPort = rawArgs.includes(PORT_PLACEHOLDER) ? await freePort() : null;
const args = rawArgs.map((a) => (a === PORT_PLACEHOLDER ? String(chosenPort) : a));
const server = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
let listening = false;

/** Tries the chosen port until it accepts a connection (the server's own start-up may take many seconds). */
const whenAccepting = (port) => {
  const attempt = () => {
    const probe = net.connect({ host: '127.0.0.1', port });
    probe.on('connect', () => {
      probe.destroy();
      if (!listening) {
        listening = true;
        bridge(port);
      }
    });
    probe.on('error', () => setTimeout(attempt, 100));
  };
  attempt();
};

const bridge = (port) => {
  fs.rmSync(socketPath, { force: true });
  net
    .createServer((client) => {
      const upstream = net.connect({ host: '127.0.0.1', port });
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    })
    .listen(socketPath, () => process.stdout.write(`${JSON.stringify({ bridge: 'ready', port })}\n`));
};

readline.createInterface({ input: server.stdout, crlfDelay: Infinity }).on('line', (line) => {
  process.stdout.write(`${line}\n`);
  const found = !listening && chosenPort === null && /https?:\/\/(?:127\.0\.0\.1|localhost):(\d+)/.exec(line);
  if (found) {
    listening = true;
    bridge(Number(found[1]));
  }
});
server.on('error', (err) => {
  process.stderr.write(`engine-bridge: ${command}: ${err.message}\n`);
  process.exit(127);
});
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => server.kill(sig));
if (chosenPort !== null) whenAccepting(chosenPort);
