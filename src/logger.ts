// One structured logger (pino). Secrets never reach it: redact covers headers and known fields.
// On a terminal the lines are human-readable (pino-pretty); otherwise one JSON object per line.
// LOG_FORMAT=json or LOG_FORMAT=pretty overrides the choice.
import { settings } from './config.js';
import { pino, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';

const options: LoggerOptions = {
  level: settings.logLevel(),
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
