// The one error table and the one error class. Every code the service answers with is a key of
// ERROR_TABLE (so a typo is a type error, not a silent 400); REST (rest/executor.ts), GraphQL
// (src/graphql/yoga.ts) and GraphQL over SSE (src/http/graphql-sse.ts) all answer through
// `errorAnswer`, so a code has one HTTP status everywhere.
import { GraphQLError } from 'graphql';

export const ERROR_TABLE = {
  invalid_request: 400,
  not_downloadable: 400,
  file_is_session_resource: 400,
  too_many_resources: 400,
  egress_header_conflict: 400,
  session_running: 400,
  session_archived: 400,
  name_mismatch: 400,
  last_revision: 400,
  invalid_token: 401,
  insufficient_credits: 402,
  budget_reached: 402,
  insufficient_scope: 403,
  universe_mismatch: 403,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  version_conflict: 409,
  agent_has_sessions: 409,
  skill_in_use: 409,
  revision_in_use: 409,
  gone: 410,
  file_too_large: 413,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_spec: 422,
  rate_limited: 429,
  request_timeout: 408,
  headers_too_large: 431,
  internal_error: 500,
  coming_soon: 501,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_TABLE;

/** The status per code, readable with a string that may not be a code (lookups at the edges). */
export const STATUS_BY_CODE: Readonly<Record<string, number>> = ERROR_TABLE;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_TABLE, code);
}

export class AppError extends GraphQLError {
  readonly code: ErrorCode;
  readonly status: number;
  constructor(code: ErrorCode, message: string, status: number = ERROR_TABLE[code]) {
    super(message, { extensions: { code, http: { status } } });
    this.code = code;
    this.status = status;
  }
}

export const notFound = (what = 'resource') => new AppError('not_found', `${what} not found`);
export const invalid = (message: string) => new AppError('invalid_request', message);

export interface ErrorAnswer {
  status: number;
  code: ErrorCode;
  message: string;
}

/**
 * What a client is told for an error: one of ours keeps its code, status and message; GraphQL's
 * own validation and input coercion errors are the caller's mistake (400 invalid_request);
 * anything else is a bug, masked as 500 internal_error.
 */
export function errorAnswer(error: unknown): ErrorAnswer {
  const ext = ((error as GraphQLError | null)?.extensions ?? {}) as { code?: unknown; http?: { status?: number } };
  const message = error instanceof Error ? error.message : String(error);
  if (isErrorCode(ext.code)) return { status: ext.http?.status ?? ERROR_TABLE[ext.code], code: ext.code, message };
  if (ext.code === 'BAD_USER_INPUT' || ext.code === 'GRAPHQL_VALIDATION_FAILED' || ext.http?.status === 400) {
    return { status: 400, code: 'invalid_request', message };
  }
  return { status: 500, code: 'internal_error', message: 'Unexpected error.' };
}
