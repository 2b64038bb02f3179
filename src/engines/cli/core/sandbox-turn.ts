// How a CLI engine's turn runs in the session's sandbox (engines/cli/engine.ts prepares it,
// run-cli.ts drives it): the settings files placed, then the turn asked of the CLI's server
// (an adapter with a server, in a sandbox that can host one) or the CLI started as a process;
// once it exits, whether the gateway stopped it for the budget (src/gateway/budget-stop.ts),
// which is then the turn's stop; a failure quotes the CLI's last stderr lines.
import { prisma } from '../../../db/client.js';
import { BUDGET_STOP, stoppedForBudget } from '../../../gateway/budget-stop.js';
import type { Sandbox } from '../../../sandbox/driver.js';
import type { CliOutputMapper, CliProcess, CliTurn, EngineAdapter } from './adapter.js';
import { engineServer } from './engine-server.js';
import { cliEnvironment } from './environment.js';
import type { InstalledEngine } from './install.js';
import type { CliSpawner } from './run-cli.js';

const STDERR_LINES_IN_ERRORS = 15;

export function sandboxTurn(opts: {
  sessionId: string;
  agentType: string;
  sandbox: Sandbox;
  adapter: EngineAdapter;
  engine: InstalledEngine;
  home: string;
  cliTurn: CliTurn;
  /** A turn on the CLI's server has ended (the server is free again). */
  onServerTurnEnded(): void;
}): { spawn: CliSpawner; mapper: CliOutputMapper } {
  const { sessionId, agentType, sandbox, adapter, engine, home, cliTurn } = opts;
  let stderrTail = () => '';
  let budgetReached = false;
  const spawn: CliSpawner = async (inv, starting) => {
    for (const [file, content] of Object.entries(inv.files)) await sandbox.writeFile(file, content);
    const env = cliEnvironment(engine, home, inv);
    let proc: CliProcess & { stderrTail(): string };
    if (adapter.server && sandbox.hostWorkspace) {
      // The CLI's server, kept running in the sandbox: a turn is a request to it.
      const server = await engineServer(sandbox, adapter.server.spec(inv, { binPath: engine.binPath, home, env, mounts: engine.mounts }), starting);
      const release = server.use();
      try {
        proc = { ...(await adapter.server.turn(server, cliTurn, starting)), stderrTail: () => server.process.stderrTail() };
      } catch (err) {
        release();
        throw err;
      }
      void proc.exited.finally(() => {
        release();
        opts.onServerTurnEnded();
      });
    } else {
      proc = await sandbox.spawn!({
        argv: inv.argv,
        env,
        stdin: inv.stdin,
        mounts: engine.mounts,
        // An interrupt while the sandbox is still receiving the engine (a pod's copy) gives up the start.
        signal: starting,
      });
    }
    stderrTail = () => proc.stderrTail();
    // Once it exits: did the gateway stop it for the budget? (the turn's stop reason then)
    const exited = proc.exited.then(async (code) => {
      budgetReached = stoppedForBudget(await prisma.session.findUnique({ where: { id: sessionId }, select: { budgetReachedAt: true } }));
      return code;
    });
    return { ...proc, lines: proc.lines, exited, kill: (sig) => proc.kill(sig) };
  };

  const inner = adapter.mapper();
  const mapper: CliOutputMapper = {
    get resumeId() {
      return inner.resumeId;
    },
    line: (text) => inner.line(text),
    finish(exitCode) {
      if (budgetReached) return { stop: BUDGET_STOP, error: null };
      const end = inner.finish(exitCode);
      // The CLI's own last words make a failure explainable (never a key: the CLI holds none).
      const tail = stderrTail().trim().split('\n').slice(-STDERR_LINES_IN_ERRORS).join('\n');
      if (end.error && tail) end.error = { ...end.error, message: `${end.error.message}\n${agentType} stderr (last lines):\n${tail}`.slice(0, 4000) };
      return end;
    },
  };
  return { spawn, mapper };
}
