// The last line of defence against an error nobody handled, installed by the process entry point
// (src/main.ts), never by startServer (tests start many servers in one process).
//  - unhandledRejection: a failed async operation whose promise nobody awaited. It unwound like
//    any rejection (no synchronous code was cut in half), so it is logged and the process serves on.
//  - uncaughtException: thrown out of an event callback. When it is request-scoped (one client's
//    socket reset, a stream closed early, a parse error on one client's bytes, one request's
//    failed query) no shared state was left half-changed: logged, and the process serves on.
//    Anything else may have interrupted shared state mid-update: logged as fatal, the service
//    stops (bounded) and the process exits 1 for its supervisor to restart it; restart recovery
//    picks up the turns it owned.
import { logger } from './logger.js';
import { AppError } from './errors.js';

const REQUEST_SCOPED_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ECANCELED',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
  'ERR_STREAM_ALREADY_FINISHED',
  'ERR_STREAM_PUSH_AFTER_EOF',
  'ERR_STREAM_UNSHIFT_AFTER_END_EVENT',
  'ERR_HTTP_HEADERS_SENT',
  'ERR_HTTP_INVALID_HEADER_VALUE',
  'ERR_INVALID_CHAR',
  'ERR_HTTP_REQUEST_TIMEOUT',
]);
// busboy reports a client's malformed multipart body with plain Errors carrying these messages.
const MULTIPART_MESSAGES = /^(Unexpected end of (form|file)|Malformed (part header|urlencoded form)|Multipart: Boundary not found|Unsupported content type)/;
// One request's failed query; the database kept its own state consistent.
const REQUEST_SCOPED_NAMES = new Set(['PrismaClientKnownRequestError', 'PrismaClientValidationError', 'ZodError', 'AbortError']);

/** Whether an uncaught error belongs to one request (safe to log and carry on). */
export function isRequestScoped(err: unknown): boolean {
  if (err instanceof AppError) return true;
  if (!(err instanceof Error)) return false;
  const code = (err as NodeJS.ErrnoException).code;
  if (code && (REQUEST_SCOPED_CODES.has(code) || code.startsWith('HPE_'))) return true;
  return REQUEST_SCOPED_NAMES.has(err.name) || MULTIPART_MESSAGES.test(err.message);
}

export interface SafetyNetOptions {
  /** Stops the service before a fatal exit (given at most FATAL_STOP_MS). */
  stop?: () => Promise<void>;
  exit?: (code: number) => void;
}

const FATAL_STOP_MS = 10_000;

/** Installs the handlers; returns a function that removes them. */
export function installProcessSafetyNet(opts: SafetyNetOptions = {}): () => void {
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  let stopping = false;

  const onRejection = (reason: unknown) => {
    logger.error({ err: reason }, 'unhandled promise rejection (logged; still serving)');
  };
  const onException = (err: unknown) => {
    if (isRequestScoped(err)) {
      logger.warn({ err }, 'uncaught request-scoped error (logged; still serving)');
      return;
    }
    logger.fatal({ err }, 'uncaught exception: state may be inconsistent; stopping');
    if (stopping) return;
    stopping = true;
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, FATAL_STOP_MS).unref());
    void Promise.race([(opts.stop?.() ?? Promise.resolve()).catch(() => undefined), timeout]).then(() => exit(1));
  };
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  };
}
