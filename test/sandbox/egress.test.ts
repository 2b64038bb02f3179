// The sandbox's only way out is the service's egress proxy. From inside a real local sandbox:
// headers declared by repository tokens and agent secrets reach a local server through the
// proxy while the sandbox's environment, files and /proc never hold the token; git clones
// through the proxy with the injected token; HTTPS to a host with header rules is terminated
// with the egress CA (trusted inside) and the header reaches the real host; a direct
// connection to the host's PostgreSQL port fails and the proxy refuses internal addresses;
// rotation changes the header on the next request; conflicts answer egress_header_conflict;
// /gateway/ answers 503 until the model gateway's endpoint exists.
//
// The test's "remote" hosts listen on the host's 127.0.0.1; inside a sandbox NO_PROXY sends
// 127.0.0.1 direct (it is the sandbox's own loopback), so the commands that play a remote call
// unset NO_PROXY first. Real destinations are names, which the proxy variables cover as they are.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startGitServer, type GitServer } from '../helpers/git-server.js';
import { readySession } from '../helpers/sessions.js';
import { expectError } from '../helpers/agents.js';
import { sandboxDriver } from '../../src/sandbox/current-driver.js';
import { planResources } from '../../src/resources/resources.js';
import { prisma } from '../../src/db/client.js';
import { bwrapAvailable } from '../../src/sandbox/local.js';
import type { Sandbox } from '../../src/sandbox/driver.js';

const TOKEN = 'ghp_repo_token_that_must_stay_outside_1';
const ROTATED = 'ghp_rotated_token_that_must_stay_outside_2';
const SECRET = 'sk_live_secret_value_that_must_stay_outside';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

function recordingServer(seen: Seen[], reply = 'upstream says hi'): http.Server {
  return http.createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers });
    res.writeHead(200, { 'content-type': 'text/plain' }).end(reply);
  });
}

/** A self-signed certificate for 127.0.0.1 (the "real" HTTPS host the proxy must verify). */
function selfSigned(): { cert: string; key: string } {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 86400_000);
  cert.setSubject([{ name: 'commonName', value: '127.0.0.1' }]);
  cert.setIssuer([{ name: 'commonName', value: '127.0.0.1' }]);
  cert.setExtensions([{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }]);
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  cert.sign(key, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

const listen = (server: http.Server) => new Promise<number>((r) => server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)));
const viaProxy = 'unset NO_PROXY no_proxy; ';
const basic = (token: string) => `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;

describe.skipIf(!bwrapAvailable())('egress through the service', () => {
  let s: TestServer;
  let git: GitServer;
  let plain: http.Server;
  let secure: https.Server;
  const seen: Seen[] = [];
  const seenTls: Seen[] = [];
  let plainPort: number;
  let tlsPort: number;
  let repo: { url: string };
  let session: { id: string };
  let box: Sandbox;
  let repoResourceId: string;
  const caDir = fs.mkdtempSync(path.join(os.tmpdir(), 'egress-ca-'));
  const saved = { allow: process.env.OUTBOUND_ALLOW, ca: process.env.EGRESS_UPSTREAM_CA_FILE };

  beforeAll(async () => {
    // The local test servers are on loopback: the operator's allow-list lets the guard pass them.
    process.env.OUTBOUND_ALLOW = '127.0.0.1/32';
    const tls = selfSigned();
    fs.writeFileSync(path.join(caDir, 'upstream.crt'), tls.cert);
    process.env.EGRESS_UPSTREAM_CA_FILE = path.join(caDir, 'upstream.crt');
    git = await startGitServer({ token: TOKEN });
    repo = git.createRepo('acme/project', { 'README.md': 'hello from the repo\n' });
    plain = recordingServer(seen);
    plainPort = await listen(plain);
    secure = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      seenTls.push({ method: req.method!, url: req.url!, headers: req.headers });
      res.writeHead(200).end('tls upstream says hi');
    });
    tlsPort = await listen(secure as unknown as http.Server);
    s = await startTestServer();
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const put = await s.api('PUT', `/agents/${agent.id}/secrets/API_KEY`, {
      body: {
        value: SECRET,
        description: `Upstream key.\negress: 127.0.0.1:${plainPort} X-Api-Key: {value}\negress: 127.0.0.1:${tlsPort} X-Api-Key: key={value}`,
      },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const created = await s.api('POST', '/sessions', {
      body: { agent: agent.id, resources: [{ type: 'github_repository', url: repo.url, authorization_token: TOKEN, mount_path: '/repo' }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    session = created.body.session;
    await waitIdle(s, session.id);
    repoResourceId = (await s.api('GET', `/sessions/${session.id}/resources`)).body.data[0].id;
    box = (await sandboxDriver().get(session.id))!;
  }, 60_000);

  afterAll(async () => {
    await s?.stop();
    await git?.close();
    plain?.close();
    secure?.close();
    fs.rmSync(caDir, { recursive: true, force: true });
    for (const [k, v] of [
      ['OUTBOUND_ALLOW', saved.allow],
      ['EGRESS_UPSTREAM_CA_FILE', saved.ca],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('adds the secret-declared header on the way to an HTTP host', async () => {
    const r = await box.exec(`${viaProxy}curl -sS -H 'X-Api-Key: forged-by-sandbox' http://127.0.0.1:${plainPort}/ping`, { timeoutMs: 20_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('upstream says hi');
    const last = seen.at(-1)!;
    expect(last.url).toBe('/ping');
    // The proxy's value replaces the one the sandbox tried to set; its own credential does not travel on.
    expect(last.headers['x-api-key']).toBe(SECRET);
    expect(last.headers['proxy-authorization']).toBeUndefined();
  });

  it('terminates TLS for a host with header rules: the header reaches the real HTTPS host', async () => {
    const r = await box.exec(`${viaProxy}curl -sS https://127.0.0.1:${tlsPort}/secure`, { timeoutMs: 20_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('tls upstream says hi');
    expect(seenTls.at(-1)!.headers['x-api-key']).toBe(`key=${SECRET}`);
  });

  it('git clones over HTTP through the proxy with the injected repository token', async () => {
    const r = await box.exec(`${viaProxy}git clone -q ${repo.url} /workspace/again && cat /workspace/again/README.md && cat /workspace/again/.git/config`, {
      timeoutMs: 30_000,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('hello from the repo');
    expect(r.stdout).not.toContain(TOKEN);
    expect(git.authHeaders.at(-1)).toBe(basic(TOKEN));
  });

  it('the token and the secret are nowhere inside: environment, files, /proc', async () => {
    const probe = [
      'env',
      'cat /proc/self/environ /proc/1/environ /proc/*/cmdline 2>/dev/null | tr "\\0" "\\n"',
      'grep -rIl --exclude-dir=.git . /workspace /tmp /run 2>/dev/null; cat /workspace/repo/.git/config',
    ].join('; echo ---; ');
    const r = await box.exec(probe, { timeoutMs: 20_000, maxOutputBytes: 4 << 20 });
    expect(r.stdout).toContain('AGENT_SERVICE_TOKEN=');
    expect(r.stdout).toContain('HTTPS_PROXY=http://session:');
    for (const needle of [TOKEN, SECRET, Buffer.from(`x-access-token:${TOKEN}`).toString('base64')]) {
      expect(r.stdout).not.toContain(needle);
    }
    const search = await box.exec(
      `grep -rIsl -D skip -e ${TOKEN} -e ${SECRET} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr --exclude-dir=lib --exclude-dir=dev; echo done`,
      { timeoutMs: 60_000 },
    );
    expect(search.stdout).toBe('done\n');
  });

  it('a direct connection to the host PostgreSQL port fails; through the proxy internal addresses are refused', async () => {
    const direct = await box.exec('exec 3<>/dev/tcp/127.0.0.1/5432 && echo CONNECTED', { timeoutMs: 5000 });
    expect(direct.stdout).not.toContain('CONNECTED');
    expect(direct.exitCode).not.toBe(0);
    const allow = process.env.OUTBOUND_ALLOW;
    delete process.env.OUTBOUND_ALLOW;
    try {
      const proxied = await box.exec(`${viaProxy}curl -s -o /dev/null -w "%{http_code}" -D - http://127.0.0.1:5432/`, { timeoutMs: 10_000 });
      expect(proxied.stdout).toMatch(/X-Agent-Service-Error: egress_refused/i);
      expect(proxied.stdout).toMatch(/403$/);
      const tunnel = await box.exec(`${viaProxy}curl -s -o /dev/null -w "%{http_connect}" https://127.0.0.1:5432/`, { timeoutMs: 10_000 });
      expect(tunnel.stdout).toBe('403');
    } finally {
      process.env.OUTBOUND_ALLOW = allow;
    }
  });

  it('a forged session credential is refused with 407, even on the session’s own socket', async () => {
    const r = await box.exec(
      `${viaProxy}curl -s -o /dev/null -w "%{http_code}" --proxy http://session:ast_sbx_forged@127.0.0.1:3128 http://127.0.0.1:${plainPort}/`,
      { timeoutMs: 10_000 },
    );
    expect(r.stdout).toBe('407');
  });

  it('rotation changes the injected header on the next request, with nothing changed inside', async () => {
    const before = await box.exec('env | sort | grep -v AGENT_SERVICE_TOKEN | grep -v _PROXY= | grep -v _proxy=');
    const rotated = await s.api('POST', `/sessions/${session.id}/resources/${repoResourceId}`, { body: { authorization_token: ROTATED } });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(JSON.stringify(rotated.body)).not.toContain(ROTATED);
    await box.exec(`${viaProxy}curl -s -o /dev/null ${repo.url}/info/refs?service=git-upload-pack`, { timeoutMs: 10_000 });
    expect(git.authHeaders.at(-1)).toBe(basic(ROTATED));
    const after = await box.exec('env | sort | grep -v AGENT_SERVICE_TOKEN | grep -v _PROXY= | grep -v _proxy=');
    expect(after.stdout).toBe(before.stdout);
  });

  it('a repository token and an agent secret setting two Authorization values on one host are egress_header_conflict', async () => {
    const second = git.createRepo('acme/second', { 'x.txt': 'x' });
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    // Two tokens for one host at create: refused.
    const both = await s.api('POST', '/sessions', {
      body: {
        agent: agent.id,
        resources: [
          { type: 'github_repository', url: repo.url, authorization_token: TOKEN, mount_path: '/a' },
          { type: 'github_repository', url: second.url, authorization_token: ROTATED, mount_path: '/b' },
        ],
      },
    });
    expectError(both, 400, 'egress_header_conflict');
    // A live session's repository token and an agent secret for the same host with another value:
    // the secret is refused while the session lives (PUT secret), and a session whose token would
    // meet an existing secret is refused at create.
    const ok = await s.api('POST', '/sessions', {
      body: { agent: agent.id, resources: [{ type: 'github_repository', url: repo.url, authorization_token: TOKEN, mount_path: '/a' }] },
    });
    expect(ok.status).toBe(201);
    const host = new URL(repo.url).host;
    const refused = await s.api('PUT', `/agents/${agent.id}/secrets/GIT_PAT`, { body: { value: 'another-value', description: `egress: ${host}` } });
    expectError(refused, 400, 'egress_header_conflict');
    expect(refused.body.error.message).not.toContain('another-value');
    expect(refused.body.error.message).not.toContain(TOKEN);
    const withSecret = (await s.api('POST', '/agents', { body: {} })).body.agent;
    expect((await s.api('PUT', `/agents/${withSecret.id}/secrets/GIT_PAT`, { body: { value: 'another-value', description: `egress: ${host}` } })).status).toBe(
      200,
    );
    const conflict = await s.api('POST', '/sessions', {
      body: { agent: withSecret.id, resources: [{ type: 'github_repository', url: repo.url, authorization_token: ROTATED, mount_path: '/a' }] },
    });
    expectError(conflict, 400, 'egress_header_conflict');
    expect(conflict.body.error.message).toMatch(/secret GIT_PAT/);
    expect(conflict.body.error.message).not.toContain(ROTATED);
    // At create the same check runs when the session's agent is known (planResources' agentId).
    const universeId = (await prisma.agent.findUniqueOrThrow({ where: { id: withSecret.id } })).universeId;
    await expect(
      planResources(universeId, 'sess_not_made', [{ type: 'github_repository', url: repo.url, authorization_token: TOKEN }], [], { agentId: withSecret.id }),
    ).rejects.toMatchObject({ code: 'egress_header_conflict', message: expect.stringMatching(/secret GIT_PAT/) });
  });

  it('/gateway/ answers 503 in the error envelope until the model gateway endpoint exists', async () => {
    if (fs.existsSync(path.join(__dirname, '../../src/gateway/http-endpoint.ts'))) return;
    const r = await box.exec('curl -s -w "\\n%{http_code}" --noproxy 127.0.0.1 http://127.0.0.1:3128/gateway/anthropic/v1/messages', { timeoutMs: 10_000 });
    const [body, status] = r.stdout.split('\n');
    expect(status).toBe('503');
    expect(JSON.parse(body!)).toEqual({ error: { code: 'gateway_unavailable', message: expect.stringContaining('gateway') } });
  });
});

async function waitIdle(s: TestServer, id: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const status = (await s.api('GET', `/sessions/${id}`)).body.session.status;
    if (status === 'idle') return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('session never became idle');
}

void readySession;
