// Inside a sandbox: runs an engine's HTTP server and makes it reachable from the host through a
// Unix socket in the sandbox's storage (the sandbox's own network namespace has only a loopback
// the host cannot reach). Starts the server command, reads its stdout until it names the
// loopback address it listens on (`http://127.0.0.1:<port>`), then listens on the socket and
// pipes each connection to that port, and prints one line `{"bridge":"ready","port":N}`.
// Everything else the server prints passes through; the bridge exits with the server.
// Usage: node engine-bridge.mjs <socket path> <command> [args...]
import fs from 'node:fs';
import net from 'node:net';
import readline from 'node:readline';
import { spawn } from 'node:child_process';

const [socketPath, command, ...args] = process.argv.slice(2);
const server = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
let listening = false;

const bridge = (port) => {
  fs.rmSync(socketPath, { force: true });
  net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  }).listen(socketPath, () => process.stdout.write(`${JSON.stringify({ bridge: 'ready', port })}\n`));
};

readline.createInterface({ input: server.stdout, crlfDelay: Infinity }).on('line', (line) => {
  process.stdout.write(`${line}\n`);
  const found = !listening && /https?:\/\/(?:127\.0\.0\.1|localhost):(\d+)/.exec(line);
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
