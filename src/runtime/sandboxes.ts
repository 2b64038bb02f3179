// The process's sandbox driver, chosen by SANDBOX_DRIVER (`local` by default, `kubernetes`),
// and the egress service every sandbox's traffic goes through.
import path from 'node:path';
import type { SandboxDriver } from '../sandbox/driver.js';
import { createLocalDriver } from '../sandbox/local.js';
import { createEgressService, type EgressService } from '../egress/service.js';
import { loadEgressSettings } from '../egress/settings.js';
import { revokeSessionCredentials } from '../gateway/session-credentials.js';
import { config } from '../config.js';
import { logger } from '../logger.js';

let driver: SandboxDriver | undefined;
let egress: EgressService | undefined;
let stopDriver: (() => Promise<void>) | undefined;

/** The egress service (one per process, made when the service starts), or null before. */
export function sandboxEgress(): EgressService | null {
  return egress ?? null;
}

export function sandboxDriver(): SandboxDriver {
  if (!driver) {
    const cfg = config();
    if (cfg.sandboxDriver !== 'local' && cfg.sandboxDriver !== 'kubernetes') {
      logger.warn({ driver: cfg.sandboxDriver }, 'unknown SANDBOX_DRIVER (local or kubernetes); using local');
    }
    if (cfg.sandboxDriver === 'kubernetes') throw new Error('the kubernetes sandbox driver starts with the service (startSandboxes)');
    if (!egress) logger.warn('sandboxes made before the service started have no egress (no way out)');
    driver = revokingOnDestroy(createLocalDriver({ rootDir: path.join(cfg.dataDir, 'sandboxes'), logger, egress: egress ?? undefined }));
  }
  return driver;
}

export function setSandboxDriver(next: SandboxDriver | undefined): void {
  driver = next ? revokingOnDestroy(next) : undefined;
}

/** Tearing a sandbox down also refuses its session credential at once (not after the cache). */
function revokingOnDestroy(inner: SandboxDriver): SandboxDriver {
  return {
    name: inner.name,
    provision: (spec) => inner.provision(spec),
    get: (sessionId) => inner.get(sessionId),
    destroy: async (sessionId) => {
      revokeSessionCredentials(sessionId);
      await inner.destroy(sessionId);
    },
  };
}

/**
 * At service start: the egress listener pods connect to and, with SANDBOX_DRIVER=kubernetes,
 * the Kubernetes driver (its warm pool starts filling). Returns what stops them again.
 */
export async function startSandboxes(): Promise<{ stop(): Promise<void> }> {
  const cfg = config();
  const settings = loadEgressSettings();
  egress = await createEgressService({ dataDir: cfg.dataDir });
  driver = undefined;
  if (cfg.sandboxDriver === 'kubernetes') {
    const service = egress;
    const listen = settings.listen ?? { host: '0.0.0.0', port: 3128 };
    const port = await service.listenTcp(listen.host, listen.port);
    const { startKubernetesSandboxes } = await import('./kubernetes-sandboxes.js');
    const started = await startKubernetesSandboxes({ egress: service, egressPort: port });
    driver = revokingOnDestroy(started.driver);
    stopDriver = started.stop;
  } else if (settings.listen) {
    await egress.listenTcp(settings.listen.host, settings.listen.port);
  }
  return { stop: closeSandboxes };
}

/** Stops the warm pool and every egress listener (after the turns have drained). */
export async function closeSandboxes(): Promise<void> {
  const stopping = stopDriver;
  stopDriver = undefined;
  await stopping?.();
  const closing = egress;
  egress = undefined;
  driver = undefined;
  await closing?.close();
}
