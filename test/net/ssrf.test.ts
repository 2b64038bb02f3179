// The outbound guard (src/net/outbound-guard.ts): every internal address form is refused when a
// webhook URL is created and when it is PATCHed (400 invalid_request), and again at delivery
// time, where the connection goes to exactly the address that was checked (DNS rebinding).
// Repository clones and message `url` sources go through the same guard. The suite's default
// allow-list (vitest.config.ts) is cleared here; tests that need it set it explicitly.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type ApiResponse } from '../helpers/server.js';
import { waitFor } from '../helpers/sessions.js';
import { addressRefusal, closeGuardedDispatcher, guardedFetch, outboundErrorMessage, type Resolver } from '../../src/net/outbound-guard.js';
import { prisma } from '../../src/db/client.js';

const ALLOW_FOR_SUITE = process.env.OUTBOUND_ALLOW;
process.env.OUTBOUND_ALLOW = '';

let s: TestServer;
let receiver: http.Server;
let port = 0;
const received: string[] = [];
// Names the tests resolve themselves (no DNS here): public, internal, mixed, and a rebinding one.
const names: Record<string, string[]> = {
  'hooks.public.test': ['93.184.215.14'],
  'internal.test': ['10.0.0.7'],
  'mixed.test': ['93.184.215.14', '192.168.1.20'],
  'mapped.test': ['::ffff:169.254.169.254'],
  'nat64.test': ['64:ff9b::a00:1'],
};
let rebindCalls = 0;

// The server composes this resolver instead of the system's (the same composition as production).
const resolver: Resolver = async (host) => {
  if (host === 'rebind.test') return [{ address: rebindCalls++ === 0 ? '93.184.215.14' : '127.0.0.1', family: 4 }];
  if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  const found = names[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    received.push(req.url ?? '');
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  port = (receiver.address() as AddressInfo).port;
  s = await startTestServer({}, { services: { resolver } });
});
afterEach(() => {
  process.env.OUTBOUND_ALLOW = '';
});
afterAll(async () => {
  await s?.stop();
  receiver?.closeAllConnections();
  receiver?.close();
  process.env.OUTBOUND_ALLOW = ALLOW_FOR_SUITE;
});

const expectRefused = (res: ApiResponse, what: string) => {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.body.error.code).toBe('invalid_request');
  expect(res.body.error.message).toMatch(/refused|https/);
};

// Every form the issue lists, and the plain ranges, as webhook URLs.
const REFUSED_URLS = () => [
  'https://[::ffff:169.254.169.254]/',
  'https://[::ffff:a9fe:a9fe]/',
  'https://[::ffff:10.0.0.1]/',
  `https://[::ffff:127.0.0.1]:${port}/`,
  `http://[::ffff:127.0.0.1]:${port}/`,
  'https://[::ffff:0:a00:1]/', // IPv4-translated
  'https://[::10.0.0.1]/', // IPv4-compatible
  'https://[64:ff9b::a9fe:a9fe]/', // NAT64 → 169.254.169.254
  'https://[64:ff9b::a00:1]/', // NAT64 → 10.0.0.1
  'https://[64:ff9b::7f00:1]/', // NAT64 → 127.0.0.1
  'https://[64:ff9b:1::a00:1]/', // local-use NAT64
  'https://[2002:a9fe:a9fe::1]/', // 6to4
  'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', // Teredo
  'https://[::1]/',
  'https://[::]/',
  'https://[fe80::1]/',
  'https://[fc00::1]/',
  'https://[fd12:3456::1]/',
  'https://[ff02::1]/',
  'https://127.0.0.1/',
  'https://127.1/',
  'https://2130706433/',
  'https://0x7f000001/',
  'https://10.1.2.3/',
  'https://172.16.0.1/',
  'https://192.168.0.1/',
  'https://169.254.169.254/latest/meta-data/',
  'https://100.64.0.1/',
  'https://0.0.0.0/',
  'https://224.0.0.1/',
  'https://255.255.255.255/',
  'https://240.0.0.1/',
  `http://localhost:${port}/`, // resolves to loopback
  'https://internal.test/',
  'https://mixed.test/',
  'https://mapped.test/',
  'https://nat64.test/',
];

describe('addressRefusal', () => {
  it.each([
    ['93.184.215.14', null],
    ['2606:4700::1111', null],
    ['::ffff:93.184.215.14', null],
    ['64:ff9b::5db8:d70e', null],
    ['::ffff:169.254.169.254', /link-local IPv4 address 169\.254\.169\.254/],
    ['::ffff:10.0.0.1', /private IPv4 address 10\.0\.0\.1/],
    ['::ffff:127.0.0.1', /loopback IPv4 address 127\.0\.0\.1/],
    ['64:ff9b::a9fe:a9fe', /link-local IPv4/],
    ['64:ff9b::c0a8:1', /private IPv4/],
    ['2002:7f00:1::1', /6to4/],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /Teredo/],
    ['::1', /loopback/],
    ['fe80::1', /link-local/],
    ['fd00::1', /unique-local/],
    ['::', /unspecified/],
    ['ff02::1', /multicast/],
    ['127.0.0.1', /loopback/],
    ['10.0.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['169.254.1.1', /link-local/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['0.0.0.0', /unspecified/],
    ['224.0.0.251', /multicast/],
    ['255.255.255.255', /broadcast/],
  ])('%s', (ip, expected) => {
    const why = addressRefusal(ip);
    if (expected === null) expect(why).toBeNull();
    else expect(why).toMatch(expected);
  });

  it('OUTBOUND_ALLOW permits exactly the listed ranges, in every form of their addresses', () => {
    process.env.OUTBOUND_ALLOW = '127.0.0.0/8, ::1';
    expect(addressRefusal('127.0.0.1')).toBeNull();
    expect(addressRefusal('::ffff:127.0.0.1')).toBeNull();
    expect(addressRefusal('::1')).toBeNull();
    expect(addressRefusal('10.0.0.1')).toMatch(/private/);
    expect(addressRefusal('::ffff:169.254.169.254')).toMatch(/link-local/);
  });
});

describe('webhook URLs are refused on create and on PATCH', () => {
  it('create: every internal form answers 400 invalid_request and stores nothing', async () => {
    const before = (await s.api('GET', '/webhooks')).body.data.length;
    for (const url of REFUSED_URLS()) expectRefused(await s.api('POST', '/webhooks', { body: { url, events: ['agent.created'] } }), url);
    expect((await s.api('GET', '/webhooks')).body.data.length).toBe(before);
  });

  it('PATCH: every internal form answers 400 invalid_request and the URL stays as it was', async () => {
    const created = await s.api('POST', '/webhooks', { body: { url: 'https://hooks.public.test/in', events: ['agent.created'] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    for (const url of REFUSED_URLS()) expectRefused(await s.api('PATCH', `/webhooks/${created.body.id}`, { body: { url } }), url);
    expect((await s.api('GET', `/webhooks/${created.body.id}`)).body.url).toBe('https://hooks.public.test/in');
    await s.api('DELETE', `/webhooks/${created.body.id}`);
  });

  it('a URL naming port 0 is refused (it was stored; found by an outside fuzz)', async () => {
    const res = await s.api('POST', '/webhooks', { body: { url: 'https://hooks.public.test:0/in', events: ['agent.created'] } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('port 0');
  });

  it('a public name, and a name that does not resolve yet, are accepted (checked again at delivery)', async () => {
    for (const url of ['https://hooks.public.test/x', 'https://not-yet.example.test/x']) {
      const res = await s.api('POST', '/webhooks', { body: { url, events: ['routine.paused'] } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      await s.api('DELETE', `/webhooks/${res.body.id}`);
    }
  });

  it('the allow-list admits a loopback receiver for local development', async () => {
    process.env.OUTBOUND_ALLOW = '127.0.0.1/32';
    const res = await s.api('POST', '/webhooks', { body: { url: `http://localhost:${port}/dev`, events: ['routine.paused'] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await s.api('DELETE', `/webhooks/${res.body.id}`);
  });
});

describe('a refused local receiver says how to allow it', () => {
  /** The OUTBOUND_ALLOW value a refusal names (it ends the message). */
  const hinted = (message: string) => /start the service with OUTBOUND_ALLOW=(\S+)$/.exec(message)?.[1];

  it.each([
    ['a webhook', '/webhooks', (url: string) => ({ url, events: ['agent.created'] }), (body: { id: string }) => `/webhooks/${body.id}`],
    ['a channel webhook', '/channels/webhooks', (url: string) => ({ url }), (body: { id: string }) => `/channels/webhooks/${body.id}`],
    [
      'a connection callback_url',
      '/channels/connections',
      (callback_url: string) => ({ platform: 'loopback', callback_url }),
      (body: { id: string }) => `/channels/connections/${body.id}`,
    ],
  ])('%s on localhost: the refusal names OUTBOUND_ALLOW=127.0.0.0/8,::1, and with it set the same request is accepted', async (_what, path, bodyOf, pathOf) => {
    const url = path === '/channels/connections' ? `http://127.0.0.1:${port}/callback` : `http://localhost:${port}/hook`;
    const refused = await s.api('POST', path, { body: bodyOf(url) });
    expectRefused(refused, url);
    expect(refused.body.error.message).toMatch(/127\.0\.0\.1 is a loopback address; to allow it/);
    const value = hinted(refused.body.error.message);
    expect(value).toBe('127.0.0.0/8,::1');

    process.env.OUTBOUND_ALLOW = value;
    const accepted = await s.api('POST', path, { body: bodyOf(url) });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    await s.api('DELETE', pathOf(accepted.body));
  });

  it('a private address is named itself, and IPv6 loopback gets the loopback ranges', async () => {
    const privateRes = await s.api('POST', '/webhooks', { body: { url: 'https://internal.test/hook', events: ['agent.created'] } });
    expect(hinted(privateRes.body.error.message)).toBe('10.0.0.7');
    const v6 = await s.api('POST', '/webhooks', { body: { url: 'http://[::1]:3000/hook', events: ['agent.created'] } });
    expect(hinted(v6.body.error.message)).toBe('127.0.0.0/8,::1');
  });
});

describe('at delivery (connect time)', () => {
  /** Creates an endpoint for agent.created, then creates an agent; returns the endpoint's delivery row once attempted. */
  async function deliverOnce(endpointId: string) {
    await s.api('POST', '/agents', { body: {} });
    let row: { attempts: number; lastError: string | null; status: string } | null = null;
    await waitFor(
      async () => {
        row = await prisma.webhookDelivery.findFirst({ where: { endpointId }, orderBy: { createdAt: 'desc' } });
        return !!row && row.attempts >= 1;
      },
      10_000,
      'an attempt',
    );
    return row!;
  }

  it('an IPv4-mapped loopback URL stored while allowed is refused once the allow-list is gone; with it, the same receiver is reached', async () => {
    process.env.OUTBOUND_ALLOW = '127.0.0.1';
    const ep = (await s.api('POST', '/webhooks', { body: { url: `http://[::ffff:127.0.0.1]:${port}/mapped`, events: ['agent.created'] } })).body;
    expect(ep.id).toMatch(/^whep_/);
    // Control: allowed, the delivery arrives (so a refusal below is the guard, not the receiver).
    const ok = await deliverOnce(ep.id);
    expect(ok).toMatchObject({ status: 'succeeded', lastError: null });
    expect(received.filter((p) => p === '/mapped')).toHaveLength(1);

    process.env.OUTBOUND_ALLOW = '';
    // The guard judges connections as they open; drop the kept-alive one from the control.
    await closeGuardedDispatcher();
    await prisma.webhookDelivery.deleteMany({ where: { endpointId: ep.id } });
    const refused = await deliverOnce(ep.id);
    expect(refused.lastError).toMatch(/loopback IPv4 address 127\.0\.0\.1/);
    expect(received.filter((p) => p === '/mapped')).toHaveLength(1);
    await s.api('DELETE', `/webhooks/${ep.id}`);
  });

  it('DNS rebinding: a name that was public at create time and points at loopback at delivery is refused', async () => {
    rebindCalls = 0;
    const ep = await s.api('POST', '/webhooks', { body: { url: `https://rebind.test:${port}/rebind`, events: ['agent.created'] } });
    expect(ep.status, JSON.stringify(ep.body)).toBe(201);
    const row = await deliverOnce(ep.body.id);
    expect(row.lastError).toMatch(/rebind\.test resolves to a refused address: 127\.0\.0\.1 is a loopback address/);
    expect(received.filter((p) => p === '/rebind')).toHaveLength(0);
    await s.api('DELETE', `/webhooks/${ep.body.id}`);
  });

  it('the connection uses the address that was checked: one resolution, no second answer to slip through', async () => {
    rebindCalls = 0;
    // First answer public (unreachable here), any later answer loopback: a check-then-resolve-again
    // client would reach the receiver; the pinned lookup cannot.
    const err = await guardedFetch(`http://rebind.test:${port}/pinned`, { signal: AbortSignal.timeout(5000) }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).not.toBeNull();
    expect(outboundErrorMessage(err)).not.toMatch(/loopback/); // it tried the public address
    expect(rebindCalls).toBe(1);
    expect(received).not.toContain('/pinned');
  });

  it('redirects are not followed to internal addresses', async () => {
    const redirector = http.createServer((_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end());
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    process.env.OUTBOUND_ALLOW = '127.0.0.1';
    const err = await guardedFetch(`http://127.0.0.1:${(redirector.address() as AddressInfo).port}/`).then(
      () => null,
      (e: unknown) => e,
    );
    expect(outboundErrorMessage(err)).toMatch(/169\.254\.169\.254 is a link-local address/);
    redirector.close();
  });
});

describe('other outbound fetches use the same guard', () => {
  it('a repository resource on an internal address is refused with 400 before git runs', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    for (const url of [`http://127.0.0.1:${port}/owner/repo`, 'https://internal.test/owner/repo', 'https://[::ffff:10.0.0.1]/owner/repo']) {
      const res = await s.api('POST', '/sessions', { body: { agent: agent.id, resources: [{ type: 'github_repository', url }] } });
      expectRefused(res, url);
    }
    expect(received.some((p) => p.startsWith('/owner/repo'))).toBe(false);
  });

  it('a message image `url` source on an internal address is refused with 400', async () => {
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const session = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session;
    for (const url of [`http://[::ffff:127.0.0.1]:${port}/img.png`, 'https://[64:ff9b::a9fe:a9fe]/img.png', 'https://internal.test/img.png']) {
      const res = await s.api('POST', `/sessions/${session.id}/events`, {
        body: { events: [{ type: 'user.message', content: [{ type: 'image', source: { type: 'url', url } }] }] },
      });
      expectRefused(res, url);
    }
    expect(received.some((p) => p === '/img.png')).toBe(false);
  });
});
