// `npm start`: the service on its embedded defaults unless the environment says otherwise.
import { loadConfig } from './config.js';
import { startServer } from './server.js';
import { logger } from './logger.js';
import { startupBanner } from './banner.js';

const running = await startServer(loadConfig());
process.stdout.write(startupBanner(running.url));

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    running.stop().then(() => process.exit(0), () => process.exit(1));
  });
}
