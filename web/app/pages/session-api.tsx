// Sessions over GraphQL: list, start, send a message, interrupt, and the session table.
import { doc, gql } from '../../shared/graphql.js';
import { href } from '../lib/router.js';
import { cents, when, USAGE_FIELDS, type Usage } from '../lib/format.js';
export { usageText } from '../lib/format.js';
import { Badge, Empty } from '../ui.js';
import { Table } from '../table.js';
import { EVENT_FIELDS, PART_FRAGMENT, type SessionEvent } from '../lib/timeline.js';

export interface Money {
  amount: string;
  currency: string;
}
export interface SessionRow {
  id: string;
  agentId: string | null;
  title: string | null;
  status: string;
  llm: string;
  default: boolean;
  createdAt: string;
  budget: { consumedCost: Money; maxListCost: Money; reached: boolean } | null;
  usage: Usage;
  forkedFrom: { sessionId: string; eventId: string | null } | null;
}

export const SESSION_FIELDS = `id agentId title status llm default createdAt budget { consumedCost { amount currency } maxListCost { amount currency } reached } usage { ${USAGE_FIELDS} } forkedFrom { sessionId eventId }`;

const LIST = doc`query Sessions($agent: String) { sessions(agent: $agent) { ${SESSION_FIELDS} } }`;
const START = doc`mutation StartSession($input: CreateSessionInput!) { createSession(input: $input) { ${SESSION_FIELDS} } }`;
const SEND = doc`mutation Send($id: String!, $input: SendSessionEventsInput!) { sendSessionEvents(sessionId: $id, input: $input) { ${EVENT_FIELDS} } } ${PART_FRAGMENT}`;
const FORK = doc`mutation ForkSession($id: String!, $input: ForkSessionInput!) { forkSession(id: $id, input: $input) { ${SESSION_FIELDS} } }`;
const INTERRUPT = doc`mutation Interrupt($id: String!) { interruptSession(id: $id) { status } }`;

export async function listSessions(agentId?: string): Promise<SessionRow[]> {
  const d = await gql<{ sessions: SessionRow[] }>(LIST, { agent: agentId ?? null });
  return d.sessions;
}

export async function startSession(agentId: string, title?: string): Promise<SessionRow> {
  const d = await gql<{ createSession: SessionRow }>(START, { input: { agent: agentId, ...(title ? { title } : {}) } });
  return d.createSession;
}

export async function sendMessage(sessionId: string, text: string): Promise<SessionEvent[]> {
  const d = await gql<{ sendSessionEvents: SessionEvent[] }>(SEND, { id: sessionId, input: { events: [{ userMessage: { content: [{ text: { text } }] } }] } });
  return d.sendSessionEvents;
}

/** A new session with this one's history up to `eventId` and a copy of its workspace. */
export async function forkSession(sessionId: string, eventId: string): Promise<SessionRow> {
  const d = await gql<{ forkSession: SessionRow }>(FORK, { id: sessionId, input: { atEventId: eventId } });
  return d.forkSession;
}

export async function interrupt(sessionId: string): Promise<'interrupting' | 'no_turn'> {
  const d = await gql<{ interruptSession: { status: 'interrupting' | 'no_turn' } }>(INTERRUPT, { id: sessionId });
  return d.interruptSession.status;
}

export const HISTORY = doc`query History($id: String!, $cursor: String) { sessionEventsPage(sessionId: $id, cursor: $cursor, limit: 1000) { cursor hasMore events { ${EVENT_FIELDS} } } } ${PART_FRAGMENT}`;
export const LIVE = doc`subscription Live($id: String!, $after: String) { sessionEvents(sessionId: $id, after: $after) { ${EVENT_FIELDS} } } ${PART_FRAGMENT}`;

export function statusBadge(status: string) {
  const tone = status === 'running' ? 'good' : status === 'idle' ? 'plain' : status === 'provisioning' ? 'warn' : 'bad';
  return <Badge tone={tone}>{status}</Badge>;
}

export function budgetText(b: SessionRow['budget']): string {
  if (!b) return 'no budget';
  return `${cents(b.consumedCost.amount, b.consumedCost.currency)} of ${cents(b.maxListCost.amount, b.maxListCost.currency)}${b.reached ? ' (reached)' : ''}`;
}

/** The universe's sessions; `agentNames` (id → display name) shows agents by name. */
export function SessionTable({ sessions, agentNames }: { sessions: SessionRow[]; agentNames?: ReadonlyMap<string, string> }) {
  if (!sessions.length) return <Empty>No sessions yet.</Empty>;
  return (
    <Table
      rows={sessions}
      rowKey={(s) => s.id}
      columns={[
        {
          label: 'Session',
          cell: (s) => (
            <>
              <a href={href('sessions', s.id)}>{s.title || s.id}</a>
              {s.default ? (
                <>
                  {' '}
                  <Badge>default</Badge>
                </>
              ) : null}
            </>
          ),
        },
        { label: 'Agent', cell: (s) => (s.agentId ? <a href={href('agents', s.agentId)}>{agentNames?.get(s.agentId) ?? <code>{s.agentId}</code>}</a> : '—') },
        { label: 'Status', cell: (s) => statusBadge(s.status) },
        { label: 'Model', cell: (s) => s.llm },
        { label: 'Budget', cell: (s) => budgetText(s.budget) },
        { label: 'Started', cell: (s) => when(s.createdAt) },
      ]}
    />
  );
}

// ---- multiagent: a coordinator's threads ----
export interface ThreadRow {
  id: string;
  status: string;
  agent: { name: string };
}
const THREADS = doc`query Threads($id: String!) { sessionThreads(sessionId: $id) { id status agent { name } } }`;
export async function listThreads(sessionId: string): Promise<ThreadRow[]> {
  return (await gql<{ sessionThreads: ThreadRow[] }>(THREADS, { id: sessionId })).sessionThreads;
}
export const THREAD_HISTORY = doc`query ThreadHistory($id: String!, $thread: String!, $cursor: String) { sessionEventsPage: threadEventsPage(sessionId: $id, threadId: $thread, cursor: $cursor, limit: 1000) { cursor hasMore events { ${EVENT_FIELDS} } } } ${PART_FRAGMENT}`;
export const THREAD_LIVE = doc`subscription ThreadLive($id: String!, $thread: String!, $after: String) { sessionEvents: threadEvents(sessionId: $id, threadId: $thread, after: $after) { ${EVENT_FIELDS} } } ${PART_FRAGMENT}`;
