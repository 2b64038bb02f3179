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

export async function buildContext(headers: HeaderSource): Promise<Context> {
  const cookies = parseCookie(headers.get('cookie') ?? '');
  const viewer = await resolveViewer({
    authorization: headers.get('authorization'),
    sessionCookie: cookies[SESSION_COOKIE],
    universeSlug: headers.get('x-universe'),
  });
  return { viewer, idempotencyKey: headers.get('idempotency-key') ?? null };
}
