// What provisioning does with a session's environment: prepares its packages (cached per
// environment version, install.ts) while the session is still `provisioning`, hands the driver
// the read-only mount, and tells the session which packages failed — one session.error
// `environment_install_failed` per package (retry_status exhausted); the session goes on
// without them. agent.status events (a `status` part) say when installing starts and ends.
import path from 'node:path';
import { prisma } from '../db/client.js';
import { config } from '../config.js';
import { logger } from '../logger.js';
import { commitEvent } from '../events/store.js';
import { statusEvent } from '../events/status-parts.js';
import type { EnvironmentMount } from '../sandbox/driver.js';
import { hasPackages, prepareEnvironment, type InstallFailure } from './install.js';
import { environmentMount } from './install-layout.js';
import { packagesOf } from './view.js';

const MAX_FAILURE_EVENTS = 20;

export interface SessionEnvironment {
  environmentId: string;
  mount: EnvironmentMount | null;
  failures: InstallFailure[];
}

export function environmentCacheRoot(): string {
  return path.join(config().dataDir, 'environments');
}

/** The session's prepared environment (null: it has none), installing its version first if needed. */
export async function prepareSessionEnvironment(sessionId: string): Promise<SessionEnvironment | null> {
  const session = await prisma.session.findUnique({ where: { id: sessionId }, select: { environment: true } });
  const env = session?.environment;
  if (!env) return null;
  const packages = packagesOf(env);
  if (!hasPackages(packages)) return { environmentId: env.id, mount: null, failures: [] };
  // Progress on the session (agent.status): installing can take minutes, cached it takes none.
  const named = (['apt', 'npm', 'pip'] as const)
    .filter((m) => packages[m].length)
    .map((m) => `${m}: ${packages[m].join(' ')}`)
    .join('; ');
  await commitEvent(sessionId, statusEvent('working', `installing the environment's packages (${named})`));
  try {
    const prepared = await prepareEnvironment({ root: environmentCacheRoot(), environmentId: env.id, version: env.version, packages });
    const failed = prepared.failures.length;
    await commitEvent(
      sessionId,
      statusEvent(
        'done',
        failed ? `the environment's packages are installed except ${failed} (see the session.error events)` : "the environment's packages are installed",
      ),
    );
    return { environmentId: env.id, mount: environmentMount(prepared.dir), failures: prepared.failures };
  } catch (err) {
    logger.error({ err, sessionId, environmentId: env.id }, 'environment could not be prepared');
    return {
      environmentId: env.id,
      mount: null,
      failures: [{ manager: 'apt', package: '(all packages)', message: `the environment could not be prepared: ${(err as Error).message}` }],
    };
  }
}

/** One session.error per failed package (at most 20, then one that counts the rest). */
export async function reportInstallFailures(sessionId: string, env: SessionEnvironment | null): Promise<void> {
  if (!env?.failures.length) return;
  const shown = env.failures.slice(0, MAX_FAILURE_EVENTS);
  for (const f of shown) {
    const message =
      f.package === '(all packages)'
        ? `environment ${env.environmentId}: ${f.message}; the session continues without its packages`
        : `environment ${env.environmentId}: the ${f.manager} package ${f.package} could not be installed (${f.message}); the session continues without it`;
    await commitEvent(sessionId, { type: 'session.error', fields: { error: { type: 'environment_install_failed', message, retry_status: 'exhausted' } } });
  }
  const rest = env.failures.length - shown.length;
  if (rest > 0) {
    await commitEvent(sessionId, {
      type: 'session.error',
      fields: {
        error: {
          type: 'environment_install_failed',
          message: `environment ${env.environmentId}: ${rest} more packages could not be installed`,
          retry_status: 'exhausted',
        },
      },
    });
  }
}
