// GraphiQL's fetcher: queries and mutations as POST /graphql, subscriptions over graphql-sse at
// /graphql/stream. The cookie session signs both in; the header editor's headers are added.
import { getOperationAST, parse, type DocumentNode } from 'graphql';
import { sseIterate } from '../shared/graphql.js';

export interface FetcherParams {
  query: string;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
}

export interface FetcherOpts {
  headers?: Record<string, unknown>;
  documentAST?: DocumentNode;
}

function stringHeaders(headers: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) if (v !== undefined && v !== null) out[k] = String(v);
  return out;
}

function isSubscription(params: FetcherParams, doc: DocumentNode | undefined): boolean {
  try {
    const op = getOperationAST(doc ?? parse(params.query), params.operationName ?? undefined);
    return op?.operation === 'subscription';
  } catch {
    return false; // the server reports the syntax error
  }
}

export function fetcher(params: FetcherParams, opts?: FetcherOpts) {
  const headers = stringHeaders(opts?.headers);
  if (isSubscription(params, opts?.documentAST)) return sseIterate(params, headers);
  return fetch('/graphql', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...headers },
    body: JSON.stringify(params),
  }).then((res) => res.json());
}
