// A CLI engine's turn end to end on SANDBOX_DRIVER=kubernetes: the service against the fake API
// server (its pods are real jailed processes; exec joins them) and the fake model provider behind
// the gateway. Over HTTP: the real CLI from the engine cache runs in the session's pod (the cache
// copied in, as the fake's image has no engines), writes a file in /workspace with its own shell
// tool, its events are mapped onto the SSE stream and the turn ends idle end_turn; the file is in
// the pod's workspace (read through the driver, from the pod); the next turn resumes the CLI's
// conversation; an interrupt stops it within about a second and its processes leave the pod; its
// environment holds the session credential and no provider key; an interrupt while the engine is
// still being copied into a new pod ends the turn at once and the CLI never starts (the copy goes
// on, and the next turn uses it); and a pod whose image has the engine at /opt/engines (with its
// install marker) runs that copy, nothing copied in. codex and claude_code (K8S_CLI_ENGINES).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeKubernetes, type FakeKubernetes } from '../fake-kubernetes/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { collectSse, readySession, sendText, waitFor, waitForEvents } from '../helpers/sessions.js';
import { ANTHROPIC_KEY, CLI_ENGINE_CASES, expectSessionCredentialOnly, OPENAI_KEY } from '../helpers/cli-engines.js';
import { requireFakeCluster, setProcessEnv } from '../helpers/fake-cluster.js';
import { kubernetesDriver } from '../../src/runtime/kubernetes-sandboxes.js';
import { engineAdapter } from '../../src/engines/cli/registry.js';
import { cacheEntry, installEngine, type InstalledEngine } from '../../src/engines/cli/core/install.js';
import { currentHarness } from '../../src/catalog/catalog.js';
import { POD_COPIES_DIR } from '../../src/sandbox/kubernetes/pod-mounts.js';
import { prisma } from '../../src/db/client.js';

// K8S_CLI_ENGINES=codex runs one engine (each copies some 400 MB into two pods).
const ENGINES = (process.env.K8S_CLI_ENGINES ?? 'codex,claude_code').split(',');
const CASES = CLI_ENGINE_CASES.filter((c) => ENGINES.includes(c.agentType));
const types = (events: any[]) => events.map((e) => e.type);

describe.each(CASES)('a $agentType turn on the kubernetes driver', (c) => {
  const ns = `cli-turn-${c.agentType.replace(/_/g, '-')}`;
  let k8s: FakeKubernetes;
  let provider: FakeProvider;
  let s: TestServer;
  let engine: InstalledEngine;
  let restoreEnv = () => {};
  // The sandbox image's /opt/engines: empty at first (engines are copied in), given the engine later.
  const imageEngines = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-cli-image-'));

  beforeAll(async () => {
    requireFakeCluster();
    // The CLI is installed (or found in ENGINE_CACHE_DIR) first: no test below times a download.
    engine = await installEngine(engineAdapter(c.agentType)!.cli, currentHarness(c.agentType));
    fs.chmodSync(imageEngines, 0o755);
    k8s = await startFakeKubernetes({ image: { '/opt/engines': imageEngines } });
    restoreEnv = setProcessEnv({
      KUBECONFIG: k8s.kubeconfig,
      K8S_NAMESPACE: ns,
      K8S_WARM_POOL_SIZE: '1',
      EGRESS_LISTEN: '127.0.0.1:0',
      EGRESS_UPSTREAM: '127.0.0.1',
      SANDBOX_SNAPSHOT_IDLE_MS: '500',
    });
    provider = await startFakeProvider();
    s = await startTestServer({
      sandboxDriver: 'kubernetes',
      openaiApiKey: OPENAI_KEY,
      openaiBaseUrl: provider.openaiBaseUrl,
      anthropicApiKey: ANTHROPIC_KEY,
      anthropicBaseUrl: provider.anthropicBaseUrl,
    });
  }, 900_000);

  afterAll(async () => {
    await s?.stop();
    await k8s?.close();
    await provider?.close();
    restoreEnv();
    fs.rmSync(imageEngines, { recursive: true, force: true });
  });
  beforeEach(() => provider.reset());
  // The first test's session: its pod has the engine's copy by then (the interrupt test reuses it).
  let warmSession: string;

  const session = async () => (await readySession(s, { agentType: c.agentType, llm: c.llm })).session as { id: string };
  const sandboxOf = async (id: string) => (await kubernetesDriver()!.get(id))!;
  /** The host processes in the session's pod of the exec that started the CLI (the CLI's wrapper, the CLI and its children). */
  const cliProcesses = (id: string) => {
    const pod = kubernetesDriver()!.podOf(id);
    return pod ? k8s.podProcesses(pod).filter((p) => p.exec?.includes('agent-spawn') && p.exec.includes(engine.dir)) : [];
  };

  it('a turn: the CLI in the pod writes a file in /workspace with its own tool, mapped events stream, idle end_turn; the next turn resumes', async () => {
    const { id } = await session();
    warmSession = id;
    provider.enqueue(c.shellStep('echo from-the-pod-cli > made-by-cli.txt', 'Writing the file now.'), { kind: 'text', text: 'I wrote made-by-cli.txt.' });
    const live = collectSse(`${s.base}/sessions/${id}/events/stream`, s.adminToken, (f) => f.some((x) => x.data?.type === 'session.status_idle'), {
      timeoutMs: 300_000,
    });
    await sendText(s, id, 'write made-by-cli.txt');
    const streamed = (await live).map((f) => f.data);
    const events = await waitForEvents(s, id, 'session.status_idle', 1, 60_000);
    expect(streamed.at(-1), JSON.stringify(events.filter((e) => e.type === 'session.error'))).toMatchObject({
      type: 'session.status_idle',
      stop_reason: { type: 'end_turn' },
    });
    for (const list of [streamed, events]) {
      expect(types(list)).toEqual(expect.arrayContaining(['session.status_running', 'agent.tool_use', 'agent.tool_result', 'agent.message']));
      expect(types(list).indexOf('agent.tool_use')).toBeLessThan(types(list).indexOf('agent.tool_result'));
    }
    const use = events.find((e) => e.type === 'agent.tool_use');
    expect(events.find((e) => e.type === 'agent.tool_result').part).toMatchObject({ type: 'tool_result', call_id: use.part.call_id, status: 'ok' });
    expect(events.filter((e) => e.type === 'agent.message').at(-1).text).toContain('I wrote made-by-cli.txt.');

    // The file is in the pod's workspace: read from the pod through the driver.
    const sandbox = await sandboxOf(id);
    expect((await sandbox.readFile('/workspace/made-by-cli.txt')).toString()).toBe('from-the-pod-cli\n');
    // The image had no engines: the cache's install was copied into the pod's /tmp volume.
    const copied = await sandbox.exec(`test -e ${POD_COPIES_DIR}${engine.dir}/node_modules/.bin && echo copied`);
    expect(copied.stdout.trim()).toBe('copied');
    // The provider saw the service's key (the CLI only the session credential); the calls were metered.
    expect(provider.requests.map((r) => r.path)).toEqual([c.providerPath, c.providerPath]);
    expect(provider.requests[0]!.headers.authorization ?? provider.requests[0]!.headers['x-api-key']).toMatch(/platform-key-never-in-a-jail/);
    expect(await prisma.modelUsage.count({ where: { sessionId: id } })).toBe(2);
    const conversation = (await prisma.session.findUniqueOrThrow({ where: { id } })).cliConversationId;
    expect(conversation).toBeTruthy();

    // Second turn: the CLI resumes its own conversation (its state is in the pod's /workspace).
    provider.enqueue({ kind: 'text', text: 'You asked me to write made-by-cli.txt.' });
    await sendText(s, id, 'what did I ask you?');
    const after = await waitForEvents(s, id, 'session.status_idle', 2, 300_000);
    expect(after.at(-1), JSON.stringify(after.filter((e) => e.type === 'session.error'))).toMatchObject({ stop_reason: { type: 'end_turn' } });
    expect(after.filter((e) => e.type === 'agent.message').at(-1).text).toBe('You asked me to write made-by-cli.txt.');
    const seen = c.conversationOf(provider.requests.at(-1)!.body);
    expect(seen).toContain('write made-by-cli.txt');
    expect(seen).toContain('I wrote made-by-cli.txt.');
    expect(seen).toContain('what did I ask you?');
    expect((await prisma.session.findUniqueOrThrow({ where: { id } })).cliConversationId).toBe(conversation);
    expect(cliProcesses(id)).toEqual([]);
  }, 600_000);

  it('interrupt of a CLI waiting on the provider: idle within about a second, its processes gone from the pod; its environment holds no provider key', async () => {
    const id = warmSession;
    provider.enqueue({ kind: 'hang', text: 'thinking' });
    await sendText(s, id, 'take your time');
    await waitFor(async () => provider.requests.length > 0, 300_000, 'the CLI to call the provider');
    const procs = cliProcesses(id);
    expect(procs.length, JSON.stringify(k8s.podProcesses(kubernetesDriver()!.podOf(id)!))).toBeGreaterThan(0);
    expectSessionCredentialOnly(procs.map((p) => p.pid));

    const started = Date.now();
    expect((await s.api('POST', `/sessions/${id}/interrupt`)).body).toEqual({ status: 'interrupting' });
    const events = await waitForEvents(s, id, 'session.status_idle', 3, 10_000);
    const took = Date.now() - started;
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    expect(took).toBeLessThan(1500);
    await waitFor(async () => cliProcesses(id).length === 0, 2000, "the CLI's processes to leave the pod");
    // Nothing the CLI wrote in the pod's workspace (its state and settings) names a provider key either.
    const workspace = await (await sandboxOf(id)).exec('tar -c -C /workspace .', { maxOutputBytes: 256 * 1024 * 1024 });
    expect(workspace.exitCode).toBe(0);
    expect(workspace.truncated).toBe(false);
    expect(workspace.stdout).toContain('.agent/');
    expect(workspace.stdout).not.toContain(OPENAI_KEY);
    expect(workspace.stdout).not.toContain(ANTHROPIC_KEY);
  }, 600_000);

  it('interrupt while the engine is being copied into the pod: idle within about a second, the CLI never starts; the next turn uses the finished copy', async () => {
    const { id } = await session();
    provider.enqueue({ kind: 'text', text: 'after the copy' });
    await sendText(s, id, 'start');
    const copying = () => {
      const pod = kubernetesDriver()!.podOf(id);
      return !!pod && k8s.podProcesses(pod).some((p) => p.args.includes(`copy ${POD_COPIES_DIR}${engine.dir}`));
    };
    await waitFor(async () => copying(), 120_000, 'the engine copy to start');
    const started = Date.now();
    expect((await s.api('POST', `/sessions/${id}/interrupt`)).body).toEqual({ status: 'interrupting' });
    const events = await waitForEvents(s, id, 'session.status_idle', 1, 120_000);
    const took = Date.now() - started;
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    expect(took).toBeLessThan(1500);
    // The copy goes on to its end (the next turn needs it); the CLI is not started for the ended turn.
    await waitFor(async () => !copying(), 300_000, 'the copy to finish');
    await new Promise((r) => setTimeout(r, 500));
    expect(cliProcesses(id)).toEqual([]);
    expect(provider.requests).toHaveLength(0);
    await sendText(s, id, 'go on');
    const next = await waitForEvents(s, id, 'session.status_idle', 2, 300_000);
    expect(next.at(-1), JSON.stringify(next.filter((e) => e.type === 'session.error'))).toMatchObject({ stop_reason: { type: 'end_turn' } });
    expect(next.filter((e) => e.type === 'agent.message' && e.final !== false).at(-1).text).toBe('after the copy');
  }, 600_000);

  it('a pod whose image has the engine at /opt/engines with its install marker runs that copy: nothing is copied in', async () => {
    // The image gets exactly this version, marker included (hard links to the cache's files).
    const entry = cacheEntry(engineAdapter(c.agentType)!.cli.npm, currentHarness(c.agentType));
    fs.mkdirSync(path.dirname(path.join(imageEngines, entry)), { recursive: true, mode: 0o755 });
    execFileSync('cp', ['-al', engine.hostDir, path.join(imageEngines, entry)]);
    const { id } = await session();
    provider.enqueue({ kind: 'text', text: 'ran from the image' });
    await sendText(s, id, 'hello');
    const events = await waitForEvents(s, id, 'session.status_idle', 1, 300_000);
    expect(events.at(-1), JSON.stringify(events.filter((e) => e.type === 'session.error'))).toMatchObject({ stop_reason: { type: 'end_turn' } });
    expect(events.filter((e) => e.type === 'agent.message' && e.final !== false).at(-1).text).toBe('ran from the image');
    const sandbox = await sandboxOf(id);
    expect((await sandbox.exec(`test -e ${POD_COPIES_DIR}${engine.dir} && echo copied || echo from-image`)).stdout.trim()).toBe('from-image');
  }, 600_000);
});
