// Sandboxes made ahead for the next session of an engine whose CLI runs as a server that is slow
// to boot (opencode: seconds to start, seconds more before its first answer; OpenClaw's Gateway:
// ≈ 8–9 s to listen on an idle machine, then seconds more for its first turn). A spare is a local
// sandbox under a session id reserved for the session that will take it, with the engine's
// server started in it and warmed by one turn per model provider (the gateway refuses those
// turns: no session has the id yet, so no model is called and nothing is metered; the refusal
// is what makes the server load its provider code). A new session of that engine and version
// whose sandbox needs nothing special (WarmRequest.plain) takes the spare's id: its credential, egress socket and
// server were made for that id, so nothing is rebound. Each take (or cold start) asks for the
// next spare, made once a turn of that engine has answered (or after REFILL_AFTER_MS) so that
// making it does not slow that answer; a spare unused for SPARE_IDLE_MS is removed; the first
// session of an engine after start is cold.
// Each spare is written down (spare-ledger.ts): a process started after one killed with -9
// removes the spares that one left (their servers died with it).
import { scrapedGauge } from '../telemetry/metrics.js';
import { newId } from '../ids.js';
import { logger } from '../logger.js';
import { service } from '../services/registry.js';
import { sandboxDriver } from '../sandbox/current-driver.js';
import { engineAdapter } from '../engines/cli/registry.js';
import { installEngine } from '../engines/cli/core/install.js';
import { engineHome } from '../engines/cli/core/engine-home.js';
import { engineServer, holdEngineServer } from '../engines/cli/core/engine-server.js';
import { engineModels } from '../catalog/catalog.js';
import { EGRESS_ENDPOINT } from '../egress/env.js';
import { cliEnvironment } from '../engines/cli/core/environment.js';
import { publishPolicyChange } from '../egress/session-policy.js';
import type { SpareLedger } from './spare-ledger.js';

const SPARE_IDLE_MS = 30 * 60 * 1000;
const REFILL_AFTER_MS = 30_000;
/** A warm-up turn that takes longer than this is given up (the spare is still used). */
const WARM_UP_TIMEOUT_MS = 60_000;

declare module '../services/registry.js' {
  interface Services {
    warmSandboxes: WarmSandboxes;
  }
}

/** What a new session asks for: its engine and version, and whether its sandbox is a plain one. */
export interface WarmRequest {
  agentType: string;
  version: string;
  /**
   * What a spare has: no skills (the CLI lists its skills folder once, when its server first
   * answers), no resources (it notes whether /workspace is a git repository then too), no MCP
   * relay (its config is read at start), no environment, no vcpus or memory of its own.
   */
  plain: boolean;
}

export interface WarmSandboxes {
  /** The reserved session id of a ready spare for this request (null: none; one is made for the next). */
  take(req: WarmRequest): string | null;
  /** A turn of this engine has answered: a spare asked for is made now. */
  turnEnded(agentType: string, version: string): void;
  /** A taken id whose session was not created after all: a spare again. */
  giveBack(req: WarmRequest, sessionId: string): void;
  /** The ready spares' session ids (what a log or a test inspects). */
  spares(): string[];
  /** Removes every spare (those being made are given up). */
  close(): Promise<void>;
  /** Removes the spares left by processes of this host that no longer run (at start); their ids. */
  removeOrphans(): Promise<string[]>;
}

interface Spare {
  id: string;
  expiry: NodeJS.Timeout;
  /** Lets the server go back to its idle stop (held while it is a spare). */
  release: () => void;
}

scrapedGauge('agent_service_warm_sandboxes', 'Spare sandboxes ready in this process (the warm pool)', () => warmSandboxes().spares().length);

export function warmSandboxes(): WarmSandboxes {
  return service('warmSandboxes');
}

export function createWarmSandboxes(ledger: SpareLedger): WarmSandboxes {
  const ready = new Map<string, Spare[]>();
  const making = new Map<string, Promise<void>>();
  /** Spares asked for, waiting for a turn to answer (the timer makes them anyway). */
  const asked = new Map<string, { req: WarmRequest; timer: NodeJS.Timeout }>();
  let closed = false;
  const stopping = new AbortController();

  const keyOf = (req: WarmRequest) => `${req.agentType}@${req.version}`;
  const discard = (id: string) =>
    void sandboxDriver()
      .destroy(id)
      .then(() => ledger.remove(id))
      .catch((err) => logger.warn({ err, sessionId: id }, 'removing a spare sandbox failed'));

  const keep = (key: string, id: string, release: () => void) => {
    if (closed) {
      release();
      return discard(id);
    }
    const expiry = setTimeout(() => {
      const list = ready.get(key) ?? [];
      ready.set(
        key,
        list.filter((s) => s.id !== id),
      );
      discard(id);
    }, SPARE_IDLE_MS);
    expiry.unref();
    ready.set(key, [...(ready.get(key) ?? []), { id, expiry, release }]);
  };

  const ask = (req: WarmRequest) => {
    const key = keyOf(req);
    if (closed || asked.has(key) || making.has(key) || ready.get(key)?.length) return;
    const timer = setTimeout(() => refill(req), REFILL_AFTER_MS);
    timer.unref();
    asked.set(key, { req, timer });
  };

  const refill = (req: WarmRequest) => {
    const key = keyOf(req);
    const waiting = asked.get(key);
    if (waiting) clearTimeout(waiting.timer);
    asked.delete(key);
    if (closed || making.has(key) || ready.get(key)?.length) return;
    const made = makeSpare(req, ledger, stopping.signal)
      .then(({ id, release }) => keep(key, id, release))
      .catch((err) => logger.warn({ err, engine: req.agentType, version: req.version }, 'a spare sandbox could not be made; the next session starts cold'))
      .finally(() => making.delete(key));
    making.set(key, made);
  };

  return {
    take(req) {
      if (closed || !req.plain || !engineAdapter(req.agentType)?.server || sandboxDriver().name !== 'local') return null;
      const key = keyOf(req);
      const spare = ready.get(key)?.shift();
      ask(req);
      if (!spare) return null;
      clearTimeout(spare.expiry);
      spare.release(); // the session's turns hold it from now on
      ledger.remove(spare.id);
      // Its warm-up ran before the session existed: what was remembered of the id then (its
      // egress policy: no secrets, no vaults) is compiled again for the session.
      void publishPolicyChange(spare.id).catch((err) => logger.warn({ err, sessionId: spare.id }, "could not refresh a spare's egress policy"));
      return spare.id;
    },
    turnEnded(agentType, version) {
      const waiting = asked.get(keyOf({ agentType, version, plain: true }));
      if (waiting) refill(waiting.req);
    },
    giveBack(req, sessionId) {
      ledger.add(sessionId);
      void holdEngineServer(sessionId).then((release) => (release ? keep(keyOf(req), sessionId, release) : discard(sessionId)));
    },
    spares: () => [...ready.values()].flat().map((s) => s.id),
    async close() {
      closed = true;
      stopping.abort();
      for (const { timer } of asked.values()) clearTimeout(timer);
      asked.clear();
      await Promise.allSettled([...making.values()]);
      const all = [...ready.values()].flat();
      ready.clear();
      for (const s of all) {
        clearTimeout(s.expiry);
        s.release();
      }
      await Promise.allSettled(
        all.map((s) =>
          sandboxDriver()
            .destroy(s.id)
            .then(() => ledger.remove(s.id)),
        ),
      );
    },
    async removeOrphans() {
      const removed: string[] = [];
      for (const orphan of ledger.orphans()) {
        try {
          await sandboxDriver().destroy(orphan.sessionId);
          orphan.forget();
          removed.push(orphan.sessionId);
        } catch (err) {
          logger.warn({ err, sessionId: orphan.sessionId }, 'removing a spare left by a stopped process failed; the next start tries again');
        }
      }
      return removed;
    },
  };
}

/** A sandbox under a new session id with the engine's server running and warmed. */
async function makeSpare(req: WarmRequest, ledger: SpareLedger, signal: AbortSignal): Promise<{ id: string; release: () => void }> {
  const adapter = engineAdapter(req.agentType)!;
  const server = adapter.server!;
  const engine = await installEngine(adapter.cli, req.version);
  signal.throwIfAborted();
  const id = newId('sess');
  ledger.add(id); // before the sandbox exists: a kill between the two leaves nothing unwritten
  const sandbox = await sandboxDriver().provision({ sessionId: id });
  let release = () => {};
  try {
    const home = engineHome(req.agentType);
    const endpoint = sandbox.egressEndpoint ?? EGRESS_ENDPOINT;
    const models = engineModels(req.agentType);
    const turn = { prompt: 'warm-up', systemPrompt: '', reasoningEffort: null, resumeId: null, mcpRelay: null, warmUp: true };
    // The same invocation a plain session's first turn makes (its config is the server's key).
    const inv = adapter.invocation({ ...turn, model: models[0]?.id ?? '' }, { binPath: engine.binPath, home, gatewayBaseUrl: `${endpoint}/gateway/anthropic` });
    for (const [file, content] of Object.entries(inv.files)) await sandbox.writeFile(file, content);
    const running = await engineServer(
      sandbox,
      server.spec(inv, { binPath: engine.binPath, home, env: cliEnvironment(engine, home, inv), mounts: engine.mounts }),
      signal,
    );
    release = running.use();
    // One warm-up turn per provider, side by side.
    await Promise.all(
      (['anthropic', 'openai'] as const).map(async (provider) => {
        const model = models.find((m) => m.provider === provider);
        if (!model) return;
        signal.throwIfAborted();
        const proc = await server.turn(running, { ...turn, model: model.id }, AbortSignal.any([signal, AbortSignal.timeout(WARM_UP_TIMEOUT_MS)]));
        const giveUp = setTimeout(() => proc.kill('SIGKILL'), WARM_UP_TIMEOUT_MS);
        const onStop = () => proc.kill('SIGKILL');
        signal.addEventListener('abort', onStop, { once: true });
        try {
          for await (const _ of proc.lines) void _;
          await proc.exited;
        } finally {
          clearTimeout(giveUp);
          signal.removeEventListener('abort', onStop);
        }
      }),
    );
    signal.throwIfAborted();
    return { id, release };
  } catch (err) {
    release();
    await sandboxDriver()
      .destroy(id)
      .then(() => ledger.remove(id))
      .catch(() => undefined);
    throw err;
  }
}
