// Agents of the universe: the list, newest first.
import { doc, gql } from '../../shared/graphql.js';
import { useAsync } from '../lib/use-async.js';
import { href } from '../lib/router.js';
import { when } from '../lib/format.js';
import { Badge, Empty, ErrorNote, Loading, Page } from '../ui.js';
import { Table } from '../table.js';

interface AgentRow {
  id: string;
  displayName: string;
  agentType: string;
  llm: string;
  sessionCount: number;
  archived: boolean;
  createdAt: string;
  version: number;
}

const LIST = doc`query Agents { agents(first: 100) { totalCount edges { node { id displayName agentType llm sessionCount archived createdAt version } } } }`;

export function AgentsPage() {
  const list = useAsync(() => gql<{ agents: { totalCount: number; edges: { node: AgentRow }[] } }>(LIST).then((d) => d.agents), []);
  return (
    <Page
      title="Agents"
      actions={
        <a className="button" href={href('agents', 'new')}>
          New agent
        </a>
      }
    >
      <ErrorNote error={list.error} />
      {list.loading && !list.data ? <Loading what="agents" /> : null}
      {list.data && !list.data.edges.length ? (
        <Empty>
          No agents yet. <a href={href('agents', 'new')}>Create the first one.</a>
        </Empty>
      ) : null}
      {list.data?.edges.length ? (
        <Table
          rows={list.data.edges.map((e) => e.node)}
          rowKey={(a) => a.id}
          caption={`${list.data.totalCount} agents`}
          columns={[
            {
              label: 'Agent',
              cell: (a) => (
                <>
                  <a href={href('agents', a.id)}>{a.displayName}</a>
                  <br />
                  <small className="muted">
                    <code>{a.id}</code>
                  </small>
                </>
              ),
            },
            { label: 'Engine', cell: (a) => a.agentType },
            { label: 'Model', cell: (a) => a.llm },
            { label: 'Sessions', cell: (a) => a.sessionCount },
            { label: 'Created', cell: (a) => when(a.createdAt) },
            { label: 'State', cell: (a) => (a.archived ? <Badge tone="warn">archived</Badge> : <Badge tone="good">active</Badge>) },
          ]}
        />
      ) : null}
    </Page>
  );
}
