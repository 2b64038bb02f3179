// Routines: a message sent to an agent on a cron schedule or by hand. Create, edit, pause,
// resume, run now, archive; each routine's runs (the session each fire started, or its error).
import { useState } from 'react';
import { doc, gql } from '../../shared/graphql.js';
import { useAsync } from '../lib/use-async.js';
import { href } from '../lib/router.js';
import { when } from '../lib/format.js';
import { Badge, ErrorNote, Loading } from '../ui.js';
import { ResourcePage, text, type FieldSpec, type Values } from '../resource.js';
import { Table } from '../table.js';

interface Routine {
  id: string;
  name: string;
  description: string | null;
  status: 'active' | 'paused';
  archivedAt: string | null;
  schedule: { expression: string; timezone: string; lastRunAt: string | null; upcomingRunsAt: string[] } | null;
  target: { __typename: 'NewSessionTarget'; agent: string } | { __typename: 'SessionTarget'; sessionId: string };
  initialEvents: { content?: { text?: string }[] }[];
  pausedReason: { __typename: string } | null;
}
interface Run {
  id: string;
  createdAt: string;
  sessionId: string | null;
  error: { type: string; message: string } | null;
  triggerContext: { __typename: string };
  agent: { name: string } | null;
}

const FIELDS = `id name description status archivedAt pausedReason { __typename }
  schedule { expression timezone lastRunAt upcomingRunsAt }
  target { __typename ... on NewSessionTarget { agent } ... on SessionTarget { sessionId } }
  initialEvents { ... on RoutineInitialEvent { content { ... on TextBlock { text } } } }`;
const LIST = doc`query Routines { routines(first: 100) { edges { node { ${FIELDS} } } } agents(first: 100, archived: false) { edges { node { id displayName } } } }`;
const CREATE = doc`mutation CreateRoutine($input: CreateRoutineInput!) { createRoutine(input: $input) { id } }`;
const UPDATE = doc`mutation UpdateRoutine($id: String!, $input: UpdateRoutineInput!) { updateRoutine(id: $id, input: $input) { id } }`;
const PAUSE = doc`mutation PauseRoutine($id: String!) { pauseRoutine(id: $id) { id } }`;
const RESUME = doc`mutation ResumeRoutine($id: String!) { resumeRoutine(id: $id) { id } }`;
const RUN = doc`mutation RunRoutine($id: String!) { runRoutine(id: $id) { id } }`;
const ARCHIVE = doc`mutation ArchiveRoutine($id: String!) { archiveRoutine(id: $id) { id } }`;
const RUNS = doc`query RoutineRuns($id: String!) { routineRuns(routineId: $id, first: 20) { edges { node { id createdAt sessionId error { type message } triggerContext { __typename } agent { name } } } } }`;

function Runs({ routine }: { routine: Routine }) {
  const runs = useAsync(
    () => gql<{ routineRuns: { edges: { node: Run }[] } }>(RUNS, { id: routine.id }).then((d) => d.routineRuns.edges.map((e) => e.node)),
    [routine],
  );
  if (!runs.data) return runs.error ? <ErrorNote error={runs.error} /> : <Loading what="runs" />;
  if (!runs.data.length) return <p className="muted">No runs yet. “Run now” fires it once.</p>;
  return (
    <Table
      rows={runs.data}
      rowKey={(r) => r.id}
      caption={`Runs of ${routine.name}`}
      columns={[
        { label: 'When', cell: (r) => when(r.createdAt) },
        { label: 'Trigger', cell: (r) => (r.triggerContext.__typename === 'ManualTrigger' ? 'manual' : 'schedule') },
        { label: 'Agent', cell: (r) => r.agent?.name ?? '—' },
        {
          label: 'Result',
          cell: (r) =>
            r.error ? (
              <span className="error-text">
                {r.error.type}: {r.error.message}
              </span>
            ) : r.sessionId ? (
              <a href={href('sessions', r.sessionId)}>
                session <code>{r.sessionId}</code>
              </a>
            ) : (
              'ok'
            ),
        },
      ]}
    />
  );
}

function input(v: Values) {
  const cron = text(v.cron);
  return {
    name: text(v.name),
    description: text(v.description) || null,
    // A routine that targets a session (made through the API) keeps its target when edited here.
    ...(text(v.agent) ? { target: { newSession: { agent: text(v.agent) } } } : {}),
    initialEvents: [{ userMessage: { content: [{ text: { text: text(v.message) } }] } }],
    schedule: cron ? { expression: cron, timezone: text(v.timezone) || 'UTC' } : null,
  };
}

export function RoutinesPage() {
  // Loaded with the list (one request): the form's agent choices and the list's agent names.
  const [agentNames, setAgentNames] = useState<ReadonlyMap<string, string>>(new Map());
  const agentField: FieldSpec = {
    name: 'agent',
    label: 'Agent',
    kind: 'select',
    required: true,
    options: [['', 'Choose an agent'], ...agentNames],
    hint: 'Each run starts a new session of this agent.',
  };
  const fields = (r?: Routine): FieldSpec[] => [
    { name: 'name', label: 'Name', required: true, maxLength: 256 },
    { name: 'description', label: 'Description', kind: 'textarea', rows: 2, maxLength: 2048 },
    ...(r?.target.__typename === 'SessionTarget' ? [] : [agentField]),
    { name: 'message', label: 'Message', kind: 'textarea', required: true, rows: 3, hint: 'The first message of every run.' },
    { name: 'cron', label: 'Schedule (cron)', placeholder: '0 9 * * 1-5', hint: 'Five fields, minute granularity; empty: runs only by hand.' },
    { name: 'timezone', label: 'Time zone', placeholder: 'UTC' },
  ];
  return (
    <ResourcePage<Routine>
      title="Routines"
      noun="routine"
      rowKey={(r) => r.id}
      rowName={(r) => r.name}
      intro={<>A message sent to an agent on a schedule (cron) or by hand; each run is a new session.</>}
      empty="No routines yet."
      load={async () => {
        const d = await gql<{ routines: { edges: { node: Routine }[] }; agents: { edges: { node: { id: string; displayName: string } }[] } }>(LIST);
        setAgentNames(new Map(d.agents.edges.map((e) => [e.node.id, e.node.displayName])));
        return d.routines.edges.map((e) => e.node);
      }}
      columns={[
        {
          label: 'Routine',
          cell: (r) => (
            <>
              {r.name}
              <br />
              <small className="muted">
                <code>{r.id}</code>
              </small>
            </>
          ),
        },
        {
          label: 'Agent',
          cell: (r) =>
            r.target.__typename === 'NewSessionTarget' ? (
              (agentNames.get(r.target.agent) ?? r.target.agent)
            ) : (
              <>
                session <code>{r.target.sessionId}</code>
              </>
            ),
        },
        {
          label: 'Schedule',
          cell: (r) =>
            r.schedule ? (
              <>
                <code>{r.schedule.expression}</code> ({r.schedule.timezone})<br />
                <small className="muted">
                  next {when(r.schedule.upcomingRunsAt[0])} · last {when(r.schedule.lastRunAt)}
                </small>
              </>
            ) : (
              'by hand only'
            ),
        },
        {
          label: 'State',
          cell: (r) =>
            r.archivedAt ? (
              <Badge tone="bad">archived</Badge>
            ) : r.status === 'active' ? (
              <Badge tone="good">active</Badge>
            ) : (
              <Badge tone="warn">{r.pausedReason?.__typename === 'RoutinePausedByError' ? 'paused by an error' : 'paused'}</Badge>
            ),
        },
      ]}
      create={{ fields: fields(), initial: { timezone: 'UTC' }, submit: async (v) => void (await gql(CREATE, { input: input(v) })) }}
      edit={{
        fields,
        show: (r) => !r.archivedAt,
        initial: (r) => ({
          name: r.name,
          description: r.description ?? '',
          agent: r.target.__typename === 'NewSessionTarget' ? r.target.agent : '',
          message: (r.initialEvents.find((e) => e.content)?.content ?? []).map((c) => c.text ?? '').join('\n') ?? '',
          cron: r.schedule?.expression ?? '',
          timezone: r.schedule?.timezone ?? 'UTC',
        }),
        submit: (r, v) => gql(UPDATE, { id: r.id, input: input(v) }),
      }}
      actions={[
        { label: 'Run now', show: (r) => !r.archivedAt, run: (r) => gql(RUN, { id: r.id }) },
        { label: 'Pause', show: (r) => !r.archivedAt && r.status === 'active', run: (r) => gql(PAUSE, { id: r.id }) },
        { label: 'Resume', show: (r) => !r.archivedAt && r.status === 'paused', run: (r) => gql(RESUME, { id: r.id }) },
      ]}
      detail={{ label: 'Runs', render: (r) => <Runs routine={r} /> }}
      remove={{ label: 'Archive', show: (r) => !r.archivedAt, run: (r) => gql(ARCHIVE, { id: r.id }) }}
      hidden={{ test: (r) => !!r.archivedAt, label: 'Show archived routines' }}
    />
  );
}
