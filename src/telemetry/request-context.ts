// The request id of the work in progress: every HTTP request gets one (a sane incoming
// X-Request-Id, else a new one), answered in `X-Request-Id`, kept here for the request's async
// work (its log lines, the turn it starts in this process) and carried in the turn queue's job
// data to the process that runs the turn (src/runtime/queue.ts). One AsyncLocalStorage, read by
// the logger's mixin (src/logger.ts).
//
// With tracing on, the id rides in the OpenTelemetry context instead (REQUEST_ID_KEY), so one
// AsyncLocalStorage (the SDK's context manager) carries both: each one active costs every async
// step of the process (its promise hooks).
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { context, createContextKey } from '@opentelemetry/api';

/** The request id's key in an OpenTelemetry context (tracing on). */
export const REQUEST_ID_KEY = createContextKey('agent-service.request_id');

export interface RequestScope {
  readonly requestId: string;
}

const storage = new AsyncLocalStorage<RequestScope>();
let scoped = true;

/**
 * Benchmarks only (bench/telemetry.ts): without request scopes no AsyncLocalStorage is active in
 * the process (its promise hooks cost every async step), as before request ids existed, to
 * measure that cost beside the default.
 */
export function setRequestScopes(on: boolean): void {
  scoped = on;
  if (!on) storage.disable();
}

/** The request id of the work in progress (undefined outside a request or a carried turn). */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId ?? (context.active().getValue(REQUEST_ID_KEY) as string | undefined);
}

/** Runs `fn` with `requestId` as the current request id (its async work keeps it). */
export function withRequestId<T>(requestId: string, fn: () => T): T {
  return scoped ? storage.run({ requestId }, fn) : fn();
}

// A client's id is kept when it is short printable text without spaces (quoted in logs and
// support tickets); anything else is replaced, so a header cannot inject into logs or answers.
const SANE = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The id of a request: its sane `X-Request-Id`, else a new one (`req_<uuid>`). */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && SANE.test(value) ? value : `req_${randomUUID()}`;
}
