// The process's sandbox driver, chosen by SANDBOX_DRIVER (`local` by default, `kubernetes`),
// and the egress service every sandbox's traffic goes through. Both are made when the services
// compose (src/composition/compose.ts); the egress service is read here, the driver through
// src/sandbox/current-driver.ts.
import { inSpan } from '../telemetry/tracing.js';
import { sandboxProvisions, scrapedLabelledGauge } from '../telemetry/metrics.js';
import path from 'node:path';
import type { SandboxDriver } from '../sandbox/driver.js';
import { createLocalDriver } from '../sandbox/local.js';
import { createEgressService, type EgressService } from '../egress/service.js';
import { loadEgressSettings } from '../egress/settings.js';
import { revokeSessionCredentials } from '../gateway/session-credentials.js';
import type { Config } from '../config.js';
import { logger } from '../logger.js';
import { service } from '../services/registry.js';

declare module '../services/registry.js' {
  interface Services {
    /** The egress service (one per process); the driver's slot is in src/sandbox/current-driver.ts. */
    sandboxEgress: EgressService;
  }
}

export function sandboxEgress(): EgressService {
  return service('sandboxEgress');
}

// The sandboxes this process's driver provisioned and has not destroyed, and those being made.
const provisioning = new Set<string>();
const provisioned = new Set<string>();
scrapedLabelledGauge('agent_service_sandboxes', 'Sandboxes of this process by state (provisioning, ready)', ['state'], () => [
  { labels: { state: 'provisioning' }, value: provisioning.size },
  { labels: { state: 'ready' }, value: provisioned.size },
]);

/**
 * Tearing a sandbox down also refuses its session credential at once (not after the cache).
 * Every provision runs in its span (`sandbox.provision`, the driver and session) and is counted.
 */
function revokingOnDestroy(inner: SandboxDriver): SandboxDriver {
  return {
    name: inner.name,
    provision: (spec) => {
      provisioning.add(spec.sessionId);
      return inSpan('sandbox.provision', { 'agent_service.sandbox.driver': inner.name, 'agent_service.session.id': spec.sessionId }, () =>
        inner.provision(spec),
      ).then(
        (sandbox) => {
          provisioning.delete(spec.sessionId);
          provisioned.add(spec.sessionId);
          sandboxProvisions.inc({ driver: inner.name, result: 'ok' });
          return sandbox;
        },
        (err: unknown) => {
          provisioning.delete(spec.sessionId);
          sandboxProvisions.inc({ driver: inner.name, result: 'error' });
          throw err;
        },
      );
    },
    get: (sessionId) => inner.get(sessionId),
    copyWorkspace: (from, to) => inner.copyWorkspace(from, to),
    destroy: async (sessionId) => {
      revokeSessionCredentials(sessionId);
      provisioned.delete(sessionId);
      await inner.destroy(sessionId);
    },
  };
}

export interface Sandboxes {
  driver: SandboxDriver;
  egress: EgressService;
  /** Stops the warm pool and every egress listener (after the turns have drained). */
  stop(): Promise<void>;
}

/**
 * The egress listener pods connect to and the driver: with SANDBOX_DRIVER=kubernetes the
 * Kubernetes driver (its warm pool starts filling), else the local one (jails under DATA_DIR).
 * `ownerId`: this process's owner value (src/services/instance.ts), which the pod driver labels
 * its pods with.
 */
export async function startSandboxes(cfg: Config, ownerId: string): Promise<Sandboxes> {
  const settings = loadEgressSettings();
  const egress = await createEgressService({ dataDir: cfg.dataDir });
  if (cfg.sandboxDriver === 'kubernetes') {
    const listen = settings.listen ?? { host: '0.0.0.0', port: 3128 };
    const port = await egress.listenTcp(listen.host, listen.port);
    const { startKubernetesSandboxes } = await import('./kubernetes-sandboxes.js');
    const started = await startKubernetesSandboxes({ egress, egressPort: port, ownerId });
    return {
      driver: revokingOnDestroy(started.driver),
      egress,
      stop: async () => {
        await started.stop();
        await egress.close();
      },
    };
  }
  if (cfg.sandboxDriver !== 'local') logger.warn({ driver: cfg.sandboxDriver }, 'unknown SANDBOX_DRIVER (local or kubernetes); using local');
  if (settings.listen) await egress.listenTcp(settings.listen.host, settings.listen.port);
  const driver = createLocalDriver({ rootDir: path.join(cfg.dataDir, 'sandboxes'), logger, egress });
  return { driver: revokingOnDestroy(driver), egress, stop: () => egress.close() };
}
