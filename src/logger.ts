// One structured logger (pino). Secrets never reach it: redact covers headers and known fields.
// On a terminal the lines are human-readable (pino-pretty); otherwise one JSON object per line.
// LOG_FORMAT=json or LOG_FORMAT=pretty overrides the choice. Lines written inside a request (or
// a turn it started) carry `request_id` and, with tracing on, `trace_id` (src/telemetry/).
import { settings } from './config.js';
import { pino, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';
import { currentRequestId } from './telemetry/request-context.js';
import { currentTraceId } from './telemetry/tracing.js';

/** Every line of a request, and of the turn it starts, names its request id and trace id. */
function mixin(): Record<string, string> {
  const requestId = currentRequestId();
  const traceId = currentTraceId();
  if (!requestId && !traceId) return {};
  const out: Record<string, string> = {};
  if (requestId) out.request_id = requestId;
  if (traceId) out.trace_id = traceId;
  return out;
}

const options: LoggerOptions = {
  level: settings.logLevel(),
  mixin,
  redact: {
    paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.value', '*.credential', '*.token'],
    censor: '[redacted]',
  },
};

const format = settings.logFormat();

export const logger =
  format === 'pretty'
    ? pino(options, pretty({ colorize: !!process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', sync: true }))
    : pino(options);
