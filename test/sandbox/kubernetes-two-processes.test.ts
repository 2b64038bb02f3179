// Two API processes (separate DATA_DIRs) on one PostgreSQL + Redis + S3 bucket, sandboxes on
// the fake Kubernetes API server: sends alternate between the processes and every turn sees the
// same workspace (the sandbox is a pod either process execs into, whichever runs the turn), and
// a token rotated through one process changes the header the other process's egress proxy adds
// on the pod's next request (the policy change travels through Redis).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeKubernetes, type FakeKubernetes } from '../fake-kubernetes/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startGitServer, type GitServer } from '../helpers/git-server.js';
import { startChildServer, api, type ChildServer } from '../helpers/child-server.js';
import { freePort } from '../helpers/durability.js';
import { bwrapAvailable } from '../../src/sandbox/local.js';

const DB = process.env.TEST_DATABASE_URL;
const REDIS = process.env.TEST_REDIS_URL;
const usable = !!DB && !!REDIS && bwrapAvailable() && process.getuid?.() === 0;
const NS = 'two-process-sandboxes';
const T1 = 'ghp_first_token_of_the_two_process_test';
const T2 = 'ghp_second_token_of_the_two_process_test';

describe.skipIf(!usable)('two API processes, sandboxes as pods', () => {
  let k8s: FakeKubernetes;
  let provider: FakeProvider;
  let git: GitServer;
  let s3: S3rver;
  const s3dir = fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-two-'));
  const schema = `k8s2_${randomBytes(5).toString('hex')}`;
  const token = `ast_two_${randomBytes(16).toString('hex')}`;
  const procs: { server: ChildServer; egressPort: number }[] = [];
  let repoUrl: string;

  beforeAll(async () => {
    k8s = await startFakeKubernetes();
    provider = await startFakeProvider();
    git = await startGitServer({ token: T1 });
    repoUrl = git.createRepo('acme/shared', { 'README.md': 'shared\n' }).url;
    s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3dir, configureBuckets: [{ name: 'two', configs: [] }] });
    const s3port = ((await s3.run()) as { port: number }).port;
    const shared = {
      ADMIN_EMAIL: 'owner@example.test',
      ADMIN_PASSWORD: 'a long enough password',
      ADMIN_TOKEN: token,
      SECRET_KEY: randomBytes(32).toString('hex'),
      RATE_LIMIT_PER_MINUTE: '100000',
      DATABASE_URL: `${DB}?schema=${schema}`,
      REDIS_URL: REDIS!,
      QUEUE_PREFIX: schema,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: provider.anthropicBaseUrl,
      BLOB_STORE: 's3',
      S3_BUCKET: 'two',
      S3_ENDPOINT: `http://127.0.0.1:${s3port}`,
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      SANDBOX_DRIVER: 'kubernetes',
      KUBECONFIG: k8s.kubeconfig,
      K8S_NAMESPACE: NS,
      K8S_WARM_POOL_SIZE: '1',
      EGRESS_UPSTREAM: '127.0.0.1',
      OUTBOUND_ALLOW: '127.0.0.1/32',
      SANDBOX_SNAPSHOT_IDLE_MS: '300',
    };
    for (const name of ['a', 'b']) {
      const egressPort = await freePort();
      const server = await startChildServer({
        ...shared,
        EGRESS_LISTEN: `127.0.0.1:${egressPort}`,
        DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), `two-${name}-`)),
      });
      procs.push({ server, egressPort });
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.server.kill('SIGKILL')));
    await k8s?.close();
    await provider?.close();
    await git?.close();
    await s3?.close();
    fs.rmSync(s3dir, { recursive: true, force: true });
    if (DB) {
      const client = new pg.Client({ connectionString: DB });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  });

  const base = (i: number) => procs[i % 2]!.server.base;
  async function waitIdle(sessionId: string, turns: number): Promise<any[]> {
    for (let i = 0; i < 1200; i++) {
      const events = (await api(base(0), token, 'GET', `/sessions/${sessionId}/events?limit=1000`)).body.events as any[];
      if (events.filter((e) => e.type === 'session.status_idle').length >= turns) return events;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('turn never ended');
  }
  async function turn(via: number, sessionId: string, command: string, n: number): Promise<string> {
    provider.enqueue({ kind: 'tool_call', name: 'bash', input: { command } }, { kind: 'text', text: 'ok' });
    const sent = await api(base(via), token, 'POST', `/sessions/${sessionId}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: `turn ${n}` }] }],
    });
    expect(sent.status).toBe(202);
    const events = await waitIdle(sessionId, n);
    return events.filter((e) => e.type === 'agent.tool_result').at(-1).part.result.stdout;
  }

  it('alternating sends all see one workspace; a rotation on one process reaches the other’s egress proxy', async () => {
    const agent = (await api(base(0), token, 'POST', '/agents', {})).body.agent;
    const created = await api(base(0), token, 'POST', '/sessions', {
      agent: agent.id,
      resources: [{ type: 'github_repository', url: repoUrl, authorization_token: T1, mount_path: '/repo' }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const sessionId = created.body.session.id;
    for (let i = 0; i < 600; i++) {
      if ((await api(base(1), token, 'GET', `/sessions/${sessionId}`)).body.session.status === 'idle') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const lines: string[] = [];
    for (let n = 1; n <= 6; n++) {
      lines.push(`line ${n} via ${n % 2 ? 'a' : 'b'}`);
      const out = await turn(n - 1, sessionId, `echo "${lines.at(-1)}" >> /workspace/log.txt; cat /workspace/log.txt /workspace/repo/README.md`, n);
      expect(out).toBe(`${lines.join('\n')}\nshared\n`);
    }

    // Which process's egress proxy the session's pod talks to; the rotation goes through the other.
    const pod = k8s.pods(NS).find((p) => p.metadata.labels['agent-service/session'] === sessionId)!;
    const upstream = (pod.spec as any).containers[0].env.find((e: { name: string }) => e.name === 'AGENT_SERVICE_EGRESS_UPSTREAM').value as string;
    const proxyIndex = procs.findIndex((p) => upstream.endsWith(`:${p.egressPort}`));
    expect(proxyIndex).toBeGreaterThanOrEqual(0);
    const probe = `(unset NO_PROXY no_proxy; curl -s -o /dev/null -w "%{http_code}" "${repoUrl}/info/refs?service=git-upload-pack")`;
    expect(await turn(proxyIndex, sessionId, probe, 7)).toBe('200'); // the proxy now holds the policy with T1
    expect(git.authHeaders.at(-1)).toBe(`Basic ${Buffer.from(`x-access-token:${T1}`).toString('base64')}`);
    const rid = (await api(base(0), token, 'GET', `/sessions/${sessionId}/resources`)).body.data[0].id;
    const rotated = await api(base(proxyIndex + 1), token, 'POST', `/sessions/${sessionId}/resources/${rid}`, { authorization_token: T2 });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(await turn(proxyIndex, sessionId, probe, 8)).toBe('401'); // the git server still wants T1: T2 was sent
    expect(git.authHeaders.at(-1)).toBe(`Basic ${Buffer.from(`x-access-token:${T2}`).toString('base64')}`);
  }, 300_000);
});
