// The browser's only way to the service: GraphQL over HTTP (queries, mutations) on /graphql and
// GraphQL over SSE (subscriptions) on /graphql/stream, both signed in by the same-origin cookie.
import { createClient, type Client, type ExecutionResult } from 'graphql-sse';

/** Every operation the dashboard sends, registered where it is defined (test/web/web-documents.test.ts
 * validates them all against the service's schema, so a schema change cannot break a page unseen). */
export const documents: string[] = [];
export function doc(strings: TemplateStringsArray, ...values: string[]): string {
  const text = strings.reduce((out, s, i) => out + s + (i < values.length ? values[i] : ''), '');
  documents.push(text);
  return text;
}

export interface GraphQLErrorShape {
  message: string;
  extensions?: { code?: string };
}

/** A failed operation, with the service's error code (e.g. `invalid_token`, `version_conflict`). */
export class GraphQLRequestError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
  ) {
    super(message);
  }
}

let universe: string | null = null;
/** The universe every request acts in (sent as X-Universe); null: the personal one. */
export function setUniverse(slug: string | null): void {
  universe = slug;
  sseClient?.dispose();
  sseClient = null;
}
export function currentUniverse(): string | null {
  return universe;
}

function universeHeader(): Record<string, string> {
  return universe ? { 'x-universe': universe } : {};
}

let onSignedOut: (() => void) | null = null;
/** Called once a request reports that the cookie session is gone. */
export function whenSignedOut(fn: () => void): void {
  onSignedOut = fn;
}

function toError(errors: readonly GraphQLErrorShape[], status: number): GraphQLRequestError {
  const first = errors[0];
  const err = new GraphQLRequestError(first?.message ?? `request failed (${status})`, first?.extensions?.code ?? 'error', status);
  if (err.code === 'invalid_token') onSignedOut?.();
  return err;
}

export async function gql<T>(query: string, variables?: Record<string, unknown>, extraHeaders: Record<string, string> = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch('/graphql', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...universeHeader(), ...extraHeaders },
      body: JSON.stringify({ query, variables }),
    });
  } catch {
    throw new GraphQLRequestError('The service cannot be reached. Is it running?', 'network_error', 0);
  }
  let body: { data?: T; errors?: GraphQLErrorShape[] };
  try {
    body = await res.json();
  } catch {
    throw new GraphQLRequestError(`The service answered ${res.status} without a GraphQL result.`, 'bad_response', res.status);
  }
  if (body.errors?.length) throw toError(body.errors, res.status);
  if (!body.data) throw new GraphQLRequestError('The service answered without data.', 'bad_response', res.status);
  return body.data;
}

let sseClient: Client | null = null;
function client(): Client {
  sseClient ??= createClient({
    url: '/graphql/stream',
    credentials: 'same-origin',
    headers: universeHeader,
    retryAttempts: 5,
  });
  return sseClient;
}

export interface SubscriptionHandlers<T> {
  next(data: T): void;
  error(err: GraphQLRequestError): void;
  complete?(): void;
}

/** Starts a subscription; the returned function ends it. */
export function subscribe<T>(query: string, variables: Record<string, unknown>, handlers: SubscriptionHandlers<T>): () => void {
  return client().subscribe<T>(
    { query, variables },
    {
      next: (result: ExecutionResult<T>) => {
        if (result.errors?.length) handlers.error(toError(result.errors as readonly GraphQLErrorShape[], 200));
        else if (result.data) handlers.next(result.data);
      },
      error: (err: unknown) => {
        if (Array.isArray(err)) return handlers.error(toError(err as GraphQLErrorShape[], 400));
        if (err instanceof Response)
          return handlers.error(new GraphQLRequestError(`The live stream was refused (${err.status}).`, 'stream_refused', err.status));
        handlers.error(new GraphQLRequestError(err instanceof Error ? err.message : 'The live stream stopped.', 'stream_error', 0));
      },
      complete: () => handlers.complete?.(),
    },
  );
}

/** The same client for GraphiQL: any operation over SSE, results as an async iterator. */
export function sseIterate<T>(
  payload: { query: string; variables?: Record<string, unknown> | null; operationName?: string | null },
  headers: Record<string, string>,
): AsyncIterableIterator<ExecutionResult<T>> {
  const c = createClient({ url: '/graphql/stream', credentials: 'same-origin', headers: () => headers, retryAttempts: 0 });
  const it = c.iterate<T>({ query: payload.query, variables: payload.variables ?? undefined, operationName: payload.operationName ?? undefined });
  const done = it.return?.bind(it);
  it.return = async (value?: unknown) => {
    const r = done ? await done(value) : { done: true as const, value: undefined };
    c.dispose();
    return r as IteratorReturnResult<undefined>;
  };
  return it as AsyncIterableIterator<ExecutionResult<T>>;
}
