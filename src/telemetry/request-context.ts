// The request id of the work in progress: every HTTP request gets one (a sane incoming
// X-Request-Id, else a new one), answered in `X-Request-Id`, kept here for the request's async
// work (its log lines, the turn it starts in this process) and carried in the turn queue's job
// data to the process that runs the turn (src/runtime/queue.ts). One AsyncLocalStorage, read by
// the logger's mixin (src/logger.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

export interface RequestScope {
  readonly requestId: string;
}

const storage = new AsyncLocalStorage<RequestScope>();

/** The request id of the work in progress (undefined outside a request or a carried turn). */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/** Runs `fn` with `requestId` as the current request id (its async work keeps it). */
export function withRequestId<T>(requestId: string, fn: () => T): T {
  return storage.run({ requestId }, fn);
}

// A client's id is kept when it is short printable text without spaces (quoted in logs and
// support tickets); anything else is replaced, so a header cannot inject into logs or answers.
const SANE = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The id of a request: its sane `X-Request-Id`, else a new one (`req_<uuid>`). */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && SANE.test(value) ? value : `req_${randomUUID()}`;
}
