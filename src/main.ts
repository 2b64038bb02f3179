// `npm start`: the service on its embedded defaults unless the environment says otherwise.
// `npm start` runs this file in ONE node process (`exec node --import tsx`), so SIGTERM/SIGINT
// reach it directly (npm forwards them too): it drains (src/shutdown.ts) and exits 0; a second
// signal exits at once. A signal during start-up is handled as soon as the start completes.
// A signal to the whole process group (Ctrl-C, `kill -INT -<pgid>`, systemd's control-group kill)
// reaches node twice about 1 ms apart — directly and forwarded by npm — so a second signal counts
// only after SECOND_SIGNAL_GRACE_MS: a person pressing Ctrl-C again, not npm's copy.
import { loadConfig } from './config.js';
import { startServer, type RunningServer } from './server.js';
import { logger } from './logger.js';
import { drainMs } from './shutdown.js';
import { installProcessSafetyNet } from './process-safety.js';
import { startupBanner } from './banner.js';
import { PortUnavailableError } from './http/port-check.js';
import { DataDirInUseError } from './db/data-dir-lock.js';
import { ownerBootstrapReport } from './auth/bootstrap.js';

/** A start that failed: one plain line for a newcomer (not a stack), and a password made meanwhile. */
function startFailed(err: unknown): never {
  if (err instanceof PortUnavailableError || err instanceof DataDirInUseError) process.stderr.write(`\nAgent Service did not start: ${err.message}\n\n`);
  else logger.fatal({ err }, 'the service did not start');
  // Created before the failure: the banner that shows it once will not print, so say it here.
  const owner = ownerBootstrapReport();
  if (owner.generatedPassword)
    process.stderr.write(`The owner account was created: sign in as ${owner.email}  password: ${owner.generatedPassword}  (shown once)\n`);
  process.exit(1);
}

let running: RunningServer | null = null;
let requested: NodeJS.Signals | null = null;
let stopping = false;
let firstSignalAt = 0;
const SECOND_SIGNAL_GRACE_MS = 1500;

function onSignal(signal: NodeJS.Signals): void {
  if (stopping || (requested && !running)) {
    if (Date.now() - firstSignalAt < SECOND_SIGNAL_GRACE_MS) return; // npm's forwarded copy
    logger.warn({ signal }, 'second signal: exiting without finishing the drain');
    process.exit(1);
  }
  requested = signal;
  firstSignalAt = Date.now();
  if (!running) return; // still starting: stop right after
  stopping = true;
  logger.info({ signal }, 'shutting down: draining (Ctrl-C again after 1.5 s to exit at once)');
  // A drain that hangs must not keep the port forever.
  setTimeout(() => {
    logger.error('shutdown did not finish in time; exiting');
    process.exit(1);
  }, drainMs() + 20_000).unref();
  running.stop().then(
    () => process.exit(0),
    (err) => {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    },
  );
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, onSignal);

try {
  running = await startServer(loadConfig());
} catch (err) {
  startFailed(err);
}
// The banner is how a newcomer learns the sign-in password: printed on stdout whether or not it
// is a terminal (a container's log, a child process), once listening. test/server/first-start.test.ts.
process.stdout.write(startupBanner(running.url));
const started = running;
installProcessSafetyNet({ stop: () => started.stop() }); // src/process-safety.ts: unhandled errors
if (requested) onSignal(requested);
