// Reading a GraphQL Relay connection (`edges { node }`, `pageInfo`) out of a route document's
// data, for list routes whose answer is the spec's plain list.
type Json = unknown;

interface Connection {
  edges: { node: Json }[];
  pageInfo?: { hasNextPage?: boolean; endCursor?: string | null };
}

function asConnection(value: Json): Connection {
  const edges = (value as { edges?: unknown } | null)?.edges;
  if (!Array.isArray(edges)) throw new Error('expected a GraphQL connection with edges');
  return value as Connection;
}

/** The nodes of a connection, in order. */
export function nodesOf(value: Json): Json[] {
  return asConnection(value).edges.map((e) => e.node);
}

/** The cursor to pass back for the next page, or null on the last page. */
export function nextCursorOf(value: Json): string | null {
  const info = asConnection(value).pageInfo;
  return info?.hasNextPage ? (info.endCursor ?? null) : null;
}
