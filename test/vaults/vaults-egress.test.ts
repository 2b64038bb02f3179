// Vault credentials from a real local sandbox (bubblewrap): a session created with `vault_ids`
// reaches a local HTTP server and a local HTTPS server (TLS terminated with the egress CA the
// sandbox trusts) and the proxy adds `header: prefix+value`, replacing what the sandbox sent;
// the sandbox's environment, files, /proc environ and command lines never hold a value; a
// replaced credential, a deleted credential and a deleted vault change the very next request.
//
// The "remote" hosts listen on the host's 127.0.0.1; inside a sandbox NO_PROXY sends 127.0.0.1
// direct (its own loopback), so the commands that play a remote call unset NO_PROXY first.
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
import { expectError } from '../helpers/agents.js';
import { waitFor } from '../helpers/sessions.js';
import { sandboxDriver } from '../../src/sandbox/current-driver.js';
import { bwrapAvailable } from '../../src/sandbox/local.js';
import type { Sandbox } from '../../src/sandbox/driver.js';

const GITHUB = 'ghp_vault_token_that_must_stay_outside_1';
const REPLACED = 'ghp_vault_replacement_that_must_stay_outside_2';
const API_KEY = 'sk_vault_api_key_that_must_stay_outside_3';
const VALUES = [GITHUB, REPLACED, API_KEY];

interface Seen {
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** A self-signed certificate for 127.0.0.1 (the "real" HTTPS host the proxy verifies). */
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

describe('vault credentials through the egress proxy', () => {
  let s: TestServer;
  let plain: http.Server;
  let secure: https.Server;
  const seen: Seen[] = [];
  const seenTls: Seen[] = [];
  const responses: string[] = [];
  let plainPort: number;
  let tlsPort: number;
  let github: { id: string };
  let api: { id: string };
  let box: Sandbox;
  let sessionId: string;
  const caDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vault-egress-ca-'));
  const saved = { allow: process.env.OUTBOUND_ALLOW, ca: process.env.EGRESS_UPSTREAM_CA_FILE };

  beforeAll(async () => {
    if (!bwrapAvailable()) throw new Error('these tests run a real sandbox: install bubblewrap (apt-get install bubblewrap)');
    // The local test servers are on loopback: the operator's allow-list lets the guard pass them.
    process.env.OUTBOUND_ALLOW = '127.0.0.1/32';
    const tls = selfSigned();
    fs.writeFileSync(path.join(caDir, 'upstream.crt'), tls.cert);
    process.env.EGRESS_UPSTREAM_CA_FILE = path.join(caDir, 'upstream.crt');
    plain = http.createServer((req, res) => {
      seen.push({ url: req.url!, headers: req.headers });
      res.writeHead(200).end('plain upstream');
    });
    plainPort = await listen(plain);
    secure = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      seenTls.push({ url: req.url!, headers: req.headers });
      res.writeHead(200).end('tls upstream');
    });
    tlsPort = await listen(secure as unknown as http.Server);
    s = await startTestServer();
    const call = s.api.bind(s);
    s.api = async (...args: Parameters<TestServer['api']>) => {
      const res = await call(...args);
      responses.push(JSON.stringify(res.body));
      return res;
    };

    github = (await s.api('POST', '/vaults', { body: { name: 'github' } })).body;
    api = (await s.api('POST', '/vaults', { body: { name: 'api' } })).body;
    expect((await s.api('PUT', `/vaults/${github.id}/credentials/GITHUB`, { body: { value: GITHUB, host: `127.0.0.1:${tlsPort}` } })).status).toBe(200);
    expect(
      (
        await s.api('PUT', `/vaults/${api.id}/credentials/API_KEY`, {
          body: { value: API_KEY, host: `127.0.0.1:${plainPort}`, header: 'X-Api-Key', prefix: '' },
        })
      ).status,
    ).toBe(200);
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const created = await s.api('POST', '/sessions', { body: { agent: agent.id, vault_ids: [github.id, api.id] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    sessionId = created.body.session.id;
    await waitFor(async () => (await s.api('GET', `/sessions/${sessionId}`)).body.session.status === 'idle', 60_000, 'idle');
    box = (await sandboxDriver().get(sessionId))!;
  }, 120_000);

  afterAll(async () => {
    await s?.stop();
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

  const curlTls = (p = '/user') => box.exec(`${viaProxy}curl -sS https://127.0.0.1:${tlsPort}${p}`, { timeoutMs: 20_000 });
  const curlPlain = (p = '/ping') => box.exec(`${viaProxy}curl -sS -H 'X-Api-Key: forged-by-sandbox' http://127.0.0.1:${plainPort}${p}`, { timeoutMs: 20_000 });

  it('HTTPS: the Authorization header reaches the real host, TLS terminated with the egress CA', async () => {
    const r = await curlTls();
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('tls upstream');
    expect(seenTls.at(-1)).toMatchObject({ url: '/user', headers: { authorization: `Bearer ${GITHUB}` } });
  });

  it('HTTP: a custom header with an empty prefix replaces the one the sandbox sent', async () => {
    const r = await curlPlain();
    expect(r.stdout).toBe('plain upstream');
    expect(seen.at(-1)!.headers['x-api-key']).toBe(API_KEY);
    expect(seen.at(-1)!.headers['proxy-authorization']).toBeUndefined();
  });

  it('no value anywhere inside: environment, /proc environ and command lines, workspace, home, temporary files', async () => {
    const probe = [
      'env',
      'cat /proc/self/environ /proc/*/environ /proc/*/cmdline 2>/dev/null | tr "\\0" "\\n"',
      'grep -rIl . /workspace "$HOME" /tmp /run 2>/dev/null',
    ].join('; echo ---; ');
    const r = await box.exec(probe, { timeoutMs: 20_000, maxOutputBytes: 4 << 20 });
    expect(r.stdout).toContain('HTTPS_PROXY=');
    for (const v of VALUES) expect(r.stdout).not.toContain(v);
    const search = await box.exec(
      `grep -rIsl -D skip ${VALUES.map((v) => `-e ${v}`).join(' ')} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr --exclude-dir=lib --exclude-dir=dev; echo done`,
      { timeoutMs: 60_000 },
    );
    expect(search.stdout).toBe('done\n');
  });

  it('a replaced credential is used on the next request, with nothing changed inside', async () => {
    const stable = 'env | sort | grep -v AGENT_SERVICE_TOKEN | grep -v _PROXY= | grep -v _proxy='; // the session credential is per exec
    const before = await box.exec(stable);
    expect((await s.api('PUT', `/vaults/${github.id}/credentials/GITHUB`, { body: { value: REPLACED, host: `127.0.0.1:${tlsPort}` } })).status).toBe(200);
    await curlTls('/after-replace');
    expect(seenTls.at(-1)).toMatchObject({ url: '/after-replace', headers: { authorization: `Bearer ${REPLACED}` } });
    expect((await box.exec(stable)).stdout).toBe(before.stdout);
  });

  it('a PUT that would conflict for this live session is refused and the header stays', async () => {
    expectError(
      await s.api('PUT', `/vaults/${api.id}/credentials/OTHER`, { body: { value: 'different', host: `127.0.0.1:${tlsPort}` } }),
      400,
      'egress_header_conflict',
    );
    await curlTls('/after-conflict');
    expect(seenTls.at(-1)!.headers.authorization).toBe(`Bearer ${REPLACED}`);
  });

  it('a deleted credential stops on the next request; a deleted vault too', async () => {
    expect((await s.api('DELETE', `/vaults/${github.id}/credentials/GITHUB`)).status).toBe(200);
    // Without header rules the proxy no longer terminates TLS for the host: the tunnel reaches
    // the real (self-signed, untrusted inside) certificate, hence -k.
    await box.exec(`${viaProxy}curl -sSk https://127.0.0.1:${tlsPort}/after-delete`, { timeoutMs: 20_000 });
    expect(seenTls.at(-1)!.url).toBe('/after-delete');
    expect(seenTls.at(-1)!.headers.authorization).toBeUndefined();

    expect((await s.api('DELETE', `/vaults/${api.id}`)).status).toBe(200);
    await curlPlain('/after-vault-delete');
    expect(seen.at(-1)!.url).toBe('/after-vault-delete');
    expect(seen.at(-1)!.headers['x-api-key']).toBe('forged-by-sandbox');
  });

  it('no API response of this file carried a value', () => {
    expect(responses.length).toBeGreaterThan(5);
    for (const v of VALUES) expect(responses.join('\n')).not.toContain(v);
  });
});
