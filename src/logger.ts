// One structured logger (pino). Secrets never reach it: redact covers headers and known fields.
import { pino } from 'pino';

export const logger = pino({
  level: process.env.LOG_LEVEL || (process.env.VITEST ? 'silent' : 'info'),
  redact: {
    paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.value', '*.credential', '*.token'],
    censor: '[redacted]',
  },
});
