// Provisioning happens at create, so the first turn is not a cold boot: the sandbox is made,
// the session moves provisioning → idle, and any initial events start the first turn.
import { prisma } from '../db/client.js';
import { sandboxDriver } from '../sandbox/current-driver.js';
import { enqueueSessionRun } from '../runtime/queue.js';
import { commitEvent } from '../events/store.js';
import { transition } from '../runtime/session-state-machine.js';
import { logger } from '../logger.js';
import { syncResources } from '../resources/resources.js';
import { materializeSkills } from '../skills/materialize.js';
import { forgetSessionMcp } from '../tools/mcp/servers.js';
import { prepareSessionEnvironment, reportInstallFailures } from '../environments/session-environment.js';
import { sandboxClientText } from '../sandbox/client-text.js';
import { config } from '../config.js';

const inFlight = new Map<string, Promise<void>>();

type ProvisionedSession = { id: string; vcpus: number | null; memoryMb: number | null; environmentId: string | null };

export async function provisionSession(session: ProvisionedSession): Promise<void> {
  try {
    // A new provision lists the agent's remote tools again (a PATCH of mcpServers applies now).
    // The environment's packages install (or come from the cache) while the session is
    // provisioning; a session without one skips that read.
    const [, environment] = await Promise.all([forgetSessionMcp(session.id), session.environmentId ? prepareSessionEnvironment(session.id) : null]);
    const sandbox = await sandboxDriver().provision({
      sessionId: session.id,
      vcpus: session.vcpus,
      memoryMb: session.memoryMb,
      environment: environment?.mount ?? null,
    });
    // Memory stores are written in before each turn (the first one included): a store of
    // thousands of memories does not hold the session's start up (src/memory/mount.ts).
    await syncResources(session.id, sandbox, { memory: false });
    await materializeSkills(session.id, sandbox);
    await reportInstallFailures(session.id, environment);
    if (await transition(session.id, 'provisioned')) await enqueueSessionRun(session.id);
  } catch (err) {
    logger.error({ err, sessionId: session.id }, 'sandbox provisioning failed');
    await commitEvent(session.id, {
      type: 'session.error',
      fields: {
        error: {
          type: 'pod_unavailable',
          message: `the sandbox could not be provisioned: ${sandboxClientText((err as Error).message, config().dataDir)}`,
          retry_status: 'exhausted',
        },
      },
    }).catch(() => undefined);
    await transition(session.id, 'provisioned').catch(() => undefined);
  }
}

export function scheduleProvisioning(session: ProvisionedSession): Promise<void> {
  const p = provisionSession(session).finally(() => inFlight.delete(session.id));
  inFlight.set(session.id, p);
  return p;
}

/** Waits for any provisioning still running (shutdown and tests). */
export async function provisioningSettled(): Promise<void> {
  await Promise.allSettled([...inFlight.values()]);
}

export async function teardownSandbox(sessionId: string): Promise<void> {
  await inFlight.get(sessionId)?.catch(() => undefined);
  await forgetSessionMcp(sessionId);
  await sandboxDriver()
    .destroy(sessionId)
    .catch((err) => logger.warn({ err, sessionId }, 'sandbox teardown failed'));
}
