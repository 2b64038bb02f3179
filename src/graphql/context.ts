// The GraphQL context: the resolved caller plus request facts. Built the same way for /graphql
// and for REST routes (which run through the same Yoga envelope).
import { parse as parseCookie } from 'cookie';
import { resolveViewer, SESSION_COOKIE, type Viewer } from '../auth/viewer.js';

export interface Context {
  viewer: Viewer | null;
  /** Idempotency-Key header of the request, if any. */
  idempotencyKey: string | null;
  /**
   * A REST route's body, already validated by its schema at the edge; the resolver that takes
   * that schema's input uses it instead of validating the GraphQL argument again.
   */
  validated?: { schema: import('zod').ZodType; value: unknown };
}

export interface HeaderSource {
  get(name: string): string | null | undefined;
}

/** `bearerHash`: the bearer's SHA-256 when the caller already computed it (REST: once per request). */
export async function buildContext(headers: HeaderSource, bearerHash?: string | null): Promise<Context> {
  const cookie = headers.get('cookie');
  const viewer = await resolveViewer({
    authorization: headers.get('authorization'),
    sessionCookie: cookie ? parseCookie(cookie)[SESSION_COOKIE] : undefined,
    universeSlug: headers.get('x-universe'),
    bearerHash,
  });
  return { viewer, idempotencyKey: headers.get('idempotency-key') ?? null };
}
