// GraphiQL served from the service's own assets (no CDN): the editor's web workers are built next
// to this bundle, and the fetcher speaks to /graphql and /graphql/stream with the cookie session.
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import 'graphiql/style.css';
import { fetcher } from './fetcher.js';

const WORKERS = '/assets/graphiql/workers';
(globalThis as { MonacoEnvironment?: unknown }).MonacoEnvironment = {
  getWorker(_id: string, label: string) {
    const name = label === 'json' ? 'json' : label === 'graphql' ? 'graphql' : 'editor';
    return new Worker(`${WORKERS}/${name}.worker.js`);
  },
};

const DEFAULT_QUERY = `# Runs as your browser session.
# Schema docs: the book icon on the left.
query Me {
  whoami { user { email } universe { slug } scopes auth }
  agents(first: 5) { edges { node { id displayName llm } } }
}

# Subscriptions run over GraphQL-over-SSE:
# subscription Live($id: String!) {
#   sessionEvents(sessionId: $id) {
#     __typename
#     ... on AgentMessageEvent { text final }
#   }
# }
`;

// Links can carry an operation: /graphql?query=…&variables=… (as Yoga's own GraphiQL reads them).
const params = new URLSearchParams(location.search);
const initial = {
  ...(params.get('query') ? { initialQuery: params.get('query')! } : {}),
  ...(params.get('variables') ? { initialVariables: params.get('variables')! } : {}),
};

createRoot(document.getElementById('graphiql')!).render(<GraphiQL fetcher={fetcher} defaultQuery={DEFAULT_QUERY} shouldPersistHeaders={false} {...initial} />);
