// An environment's network allow-list, enforced by the egress proxy on a real local sandbox:
// an allowed local server answers, another is refused with egress_not_allowed; a patched list
// applies to the live session on its next request; an empty list refuses every destination but
// leaves the model gateway's path; a session without an environment keeps the deployment's
// behaviour (any destination the outbound guard accepts).
//
// The "remote" servers listen on the host's 127.0.0.1; inside a sandbox NO_PROXY sends 127.0.0.1
// direct (its own loopback), so the commands unset NO_PROXY to go through the proxy.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { readySession } from '../helpers/sessions.js';
import { sandboxDriver } from '../../src/sandbox/current-driver.js';
import { bwrapAvailable } from '../../src/sandbox/local.js';

const viaProxy = 'unset NO_PROXY no_proxy; ';
const listen = (server: http.Server) => new Promise<number>((r) => server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)));

describe('environment allow-list through the egress proxy', () => {
  let s: TestServer;
  const servers: http.Server[] = [];
  let portA: number;
  let portB: number;
  const saved = process.env.OUTBOUND_ALLOW;

  beforeAll(async () => {
    // The local test servers are on loopback: the operator's setting lets the guard pass them.
    process.env.OUTBOUND_ALLOW = '127.0.0.1/32';
    for (const name of ['A', 'B']) servers.push(http.createServer((_req, res) => res.writeHead(200).end(`server ${name}`)));
    [portA, portB] = [await listen(servers[0]!), await listen(servers[1]!)];
    s = await startTestServer();
  });
  afterAll(async () => {
    await s?.stop();
    for (const server of servers) server.close();
    if (saved === undefined) delete process.env.OUTBOUND_ALLOW;
    else process.env.OUTBOUND_ALLOW = saved;
  });

  /** `<status> <X-Agent-Service-Error> <body>` of a GET from inside the session's sandbox. */
  async function fetchFrom(sessionId: string, port: number): Promise<string> {
    const box = await sandboxDriver().get(sessionId);
    const r = await box!.exec(
      `${viaProxy}curl -s -D /tmp/h -o /tmp/b http://127.0.0.1:${port}/; code=$(head -1 /tmp/h | cut -d' ' -f2); why=$(grep -i '^x-agent-service-error' /tmp/h | cut -d' ' -f2 | tr -d '\\r'); echo "$code \${why:-none} $(cat /tmp/b)"`,
      { timeoutMs: 20_000 },
    );
    return r.stdout.trim();
  }

  it('needs bubblewrap (apt package bubblewrap)', () => {
    expect(bwrapAvailable(), 'install the bubblewrap package').toBe(true);
  });

  it('allows the listed host:port, refuses another; a patch applies to the live session at once', async () => {
    const env = (await s.api('POST', '/environments', { body: { name: 'net', network: { allowed_hosts: [`127.0.0.1:${portA}`] } } })).body;
    const { session } = await readySession(s, {}, { environment_id: env.id });
    expect(await fetchFrom(session.id, portA)).toBe('200 none server A');
    expect(await fetchFrom(session.id, portB)).toMatch(/^403 egress_not_allowed /);

    expect((await s.api('PATCH', `/environments/${env.id}`, { body: { network: { allowed_hosts: [`127.0.0.1:${portB}`] } } })).status).toBe(200);
    expect(await fetchFrom(session.id, portB)).toBe('200 none server B');
    expect(await fetchFrom(session.id, portA)).toMatch(/^403 egress_not_allowed /);
  });

  it('an empty list refuses every destination; the model gateway path is not a destination', async () => {
    const env = (await s.api('POST', '/environments', { body: { name: 'closed' } })).body;
    const { session } = await readySession(s, {}, { environment_id: env.id });
    expect(await fetchFrom(session.id, portA)).toMatch(/^403 egress_not_allowed /);
    expect(await fetchFrom(session.id, portB)).toMatch(/^403 egress_not_allowed /);
    const box = await sandboxDriver().get(session.id);
    const gateway = await box!.exec('curl -s -o /dev/null -D - http://127.0.0.1:3128/gateway/anthropic/v1/models', { timeoutMs: 20_000 });
    expect(gateway.stdout).toMatch(/^HTTP\/1\.1 \d{3}/);
    expect(gateway.stdout.toLowerCase()).not.toContain('egress_not_allowed');
  });

  it('a session without an environment keeps the deployment behaviour', async () => {
    const { session } = await readySession(s);
    expect(await fetchFrom(session.id, portA)).toBe('200 none server A');
    expect(await fetchFrom(session.id, portB)).toBe('200 none server B');
  });
});
