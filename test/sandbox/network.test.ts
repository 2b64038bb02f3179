// The sandbox has no route to the host: a command inside it cannot open a TCP connection to
// the host's PostgreSQL (127.0.0.1:5432) or Redis (127.0.0.1:6379), neither through the driver
// nor from an agent's turn (the bash tool). Each probe is first shown to succeed from the host,
// so a refusal inside means isolation, not an empty port.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapAvailable, createLocalDriver } from '../../src/sandbox/local.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';

const PORTS = [5432, 6379];
const probe = (port: number) => `exec 3<>/dev/tcp/127.0.0.1/${port} && echo CONNECTED`;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-net-'));
const standIns: net.Server[] = [];

/** Whether something on the host accepts connections on 127.0.0.1:port. */
function reachableFromHost(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

beforeAll(async () => {
  // PostgreSQL and Redis normally run here; where one does not, a stand-in listens in its place.
  for (const port of PORTS) {
    if (await reachableFromHost(port)) continue;
    const server = net.createServer((s) => s.end());
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
    standIns.push(server);
  }
  for (const port of PORTS) expect(await reachableFromHost(port), `host reaches ${port}`).toBe(true);
});
afterAll(() => {
  for (const s of standIns) s.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!bwrapAvailable())('the local sandbox has its own network namespace', () => {
  it.each(PORTS)('a command cannot connect to 127.0.0.1:%i', async (port) => {
    const driver = createLocalDriver({ rootDir: root });
    const box = await driver.provision({ sessionId: `sess_net_${port}` });
    const r = await box.exec(probe(port), { timeoutMs: 5000 });
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout).not.toContain('CONNECTED');
    expect(r.stderr).toMatch(/Connection refused|Network is unreachable|No route/i);
    // Nothing but its own loopback: no interface leads out.
    const links = await box.exec('cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "');
    expect(links.stdout.trim().split('\n')).toEqual(['lo']);
    await driver.destroy(`sess_net_${port}`);
  });
});

describe.skipIf(!bwrapAvailable())("an agent's turn cannot reach the host's services", () => {
  let s: TestServer;
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider();
    s = await startTestServer({ anthropicApiKey: 'sk', anthropicBaseUrl: fake.anthropicBaseUrl });
  });
  afterAll(async () => {
    await s?.stop();
    await fake?.close();
  });

  it('the bash tool fails to open 127.0.0.1:5432 and 127.0.0.1:6379', async () => {
    const { session } = await readySession(s);
    const command = PORTS.map((p) => `(${probe(p)}) || echo "REFUSED ${p}"`).join('; ');
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command } }, { kind: 'text', text: 'done' });
    await sendText(s, session.id, 'probe the host');
    const events = await waitForEvents(s, session.id, 'agent.tool_result', 1, 20_000);
    const result = events.find((e) => e.type === 'agent.tool_result')!.part.result;
    expect(result.stdout).not.toContain('CONNECTED');
    for (const p of PORTS) expect(result.stdout).toContain(`REFUSED ${p}`);
  });
});
