// The process's sandbox driver, chosen by SANDBOX_DRIVER (local by default).
import path from 'node:path';
import type { SandboxDriver } from '../sandbox/driver.js';
import { createLocalDriver } from '../sandbox/local.js';
import { config } from '../config.js';
import { logger } from '../logger.js';

let driver: SandboxDriver | undefined;

export function sandboxDriver(): SandboxDriver {
  if (!driver) {
    const cfg = config();
    if (cfg.sandboxDriver !== 'local') {
      logger.warn({ driver: cfg.sandboxDriver }, 'only the local sandbox driver is available; using local');
    }
    driver = createLocalDriver({ rootDir: path.join(cfg.dataDir, 'sandboxes'), logger });
  }
  return driver;
}

export function setSandboxDriver(next: SandboxDriver | undefined): void {
  driver = next;
}
