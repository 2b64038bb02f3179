// The one error class: a GraphQLError carrying the spec's code and HTTP status, so the REST
// layer and GraphQL clients see the same `{code, message}`.
import { GraphQLError } from 'graphql';

export const STATUS_BY_CODE: Record<string, number> = {
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
};

export class AppError extends GraphQLError {
  readonly code: string;
  readonly status: number;
  constructor(code: string, message: string, status = STATUS_BY_CODE[code] ?? 400) {
    super(message, { extensions: { code, http: { status } } });
    this.code = code;
    this.status = status;
  }
}

export const notFound = (what = 'resource') => new AppError('not_found', `${what} not found`);
export const invalid = (message: string) => new AppError('invalid_request', message);
