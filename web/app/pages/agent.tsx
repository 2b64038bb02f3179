// One agent: settings (edit with optimistic version check), prompt with its versions, secrets by
// key only, its sessions (start one), archive and delete.
import { useState, type FormEvent } from 'react';
import { doc, gql } from '../../shared/graphql.js';
import { useAction, useAsync } from '../lib/use-async.js';
import { href, navigate } from '../lib/router.js';
import { when } from '../lib/format.js';
import { Badge, ConfirmButton, Empty, ErrorNote, Field, Loading, Notice, Page } from '../ui.js';
import { AgentFieldsForm, type AgentFields } from './agent-form.js';
import { SessionTable, startSession, listSessions } from './session-api.js';

interface Agent {
  id: string;
  slug: string;
  displayName: string;
  description: string | null;
  agentType: string;
  llm: string;
  reasoningEffort: string | null;
  capabilities: string[];
  archived: boolean;
  version: number;
  promptVersion: number | null;
  sessionCount: number;
  createdAt: string;
}

const AGENT_FIELDS = 'id slug displayName description agentType llm reasoningEffort capabilities archived version promptVersion sessionCount createdAt';
const GET = doc`query Agent($id: String!) { agent(id: $id) { ${AGENT_FIELDS} } }`;
const UPDATE = doc`mutation UpdateAgent($id: String!, $input: UpdateAgentInput!) { updateAgent(id: $id, input: $input) { ${AGENT_FIELDS} } }`;
const ARCHIVE = doc`mutation ArchiveAgent($id: String!) { archiveAgent(id: $id) { ${AGENT_FIELDS} } }`;
const DELETE = doc`mutation DeleteAgent($id: String!) { deleteAgent(id: $id) }`;

const TABS: [string, string][] = [
  ['settings', 'Settings'],
  ['prompt', 'Prompt'],
  ['secrets', 'Secrets'],
  ['sessions', 'Sessions'],
];

function toFields(a: Agent): AgentFields {
  return {
    displayName: a.displayName,
    description: a.description ?? '',
    agentType: a.agentType,
    llm: a.llm,
    reasoningEffort: a.reasoningEffort ?? '',
    capabilities: a.capabilities,
  };
}

export function AgentPage({ id, tab }: { id: string; tab: string }) {
  const agent = useAsync(() => gql<{ agent: Agent }>(GET, { id }).then((d) => d.agent), [id]);
  const a = agent.data;
  return (
    <Page
      title={a ? a.displayName : 'Agent'}
      actions={
        a ? (
          <>
            {a.archived ? <Badge tone="warn">archived</Badge> : null}
            <code>{a.id}</code>
          </>
        ) : null
      }
    >
      <p>
        <a href={href('agents')}>← All agents</a>
      </p>
      <ErrorNote error={agent.error} />
      {!a && agent.loading ? <Loading what="the agent" /> : null}
      {a ? (
        <>
          <nav aria-label="Agent" className="tabs">
            {TABS.map(([key, label]) => (
              <a key={key} href={href('agents', id, key)} aria-current={tab === key ? 'page' : undefined}>
                {label}
              </a>
            ))}
          </nav>
          {tab === 'settings' ? <Settings agent={a} onSaved={agent.set} /> : null}
          {tab === 'prompt' ? <Prompt agent={a} onSaved={agent.reload} /> : null}
          {tab === 'secrets' ? <Secrets agentId={a.id} /> : null}
          {tab === 'sessions' ? <Sessions agent={a} /> : null}
        </>
      ) : null}
    </Page>
  );
}

function Settings({ agent, onSaved }: { agent: Agent; onSaved: (a: Agent) => void }) {
  const [fields, setFields] = useState(toFields(agent));
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    setSaved(false);
    const input = {
      displayName: fields.displayName.trim(),
      description: fields.description.trim() || null,
      llm: fields.llm,
      reasoningEffort: fields.reasoningEffort || null,
      capabilities: fields.capabilities,
      expectedVersion: agent.version,
    };
    const d = await gql<{ updateAgent: Agent }>(UPDATE, { id: agent.id, input });
    onSaved(d.updateAgent);
    setSaved(true);
  });
  const archive = useAction(async () => onSaved((await gql<{ archiveAgent: Agent }>(ARCHIVE, { id: agent.id })).archiveAgent));
  const remove = useAction(async () => {
    await gql(DELETE, { id: agent.id });
    navigate('agents');
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.run();
  };
  return (
    <>
      <form className="card form" onSubmit={submit} aria-label="Agent settings">
        <p className="muted">
          Version {agent.version} · slug <code>{agent.slug}</code> · created {when(agent.createdAt)}
        </p>
        <AgentFieldsForm value={fields} onChange={setFields} engineLocked />
        <ErrorNote error={save.error} prefix="Not saved" />
        {save.error && (save.error as Error & { code?: string }).code === 'version_conflict' ? (
          <p>Someone changed this agent meanwhile: reload the page to see their version.</p>
        ) : null}
        {saved ? <Notice>Saved (version {agent.version}).</Notice> : null}
        <button type="submit" disabled={save.busy || agent.archived}>
          {save.busy ? 'Saving…' : 'Save'}
        </button>
      </form>
      <div className="card danger-zone">
        <h2>Archive or delete</h2>
        <p className="muted">An archived agent is read-only and starts no new sessions. Only an agent without sessions can be deleted.</p>
        <ErrorNote error={archive.error ?? remove.error} />
        {!agent.archived ? <ConfirmButton label="Archive" confirmLabel="Archive this agent" busy={archive.busy} onConfirm={() => void archive.run()} /> : null}{' '}
        <ConfirmButton label="Delete" confirmLabel="Delete this agent" busy={remove.busy} onConfirm={() => void remove.run()} />
      </div>
    </>
  );
}

interface PromptVersion {
  version: number;
  content: string;
  note: string | null;
  active: boolean;
  createdAt: string;
}

const VERSIONS = doc`query PromptVersions($id: String!) { agentPromptVersions(agentId: $id) { version content note active createdAt } }`;
const SET_PROMPT = doc`mutation SetPrompt($id: String!, $input: PutAgentPromptInput!) { setAgentPrompt(agentId: $id, input: $input) { version unchanged } }`;

function Prompt({ agent, onSaved }: { agent: Agent; onSaved: () => void }) {
  const versions = useAsync(() => gql<{ agentPromptVersions: PromptVersion[] }>(VERSIONS, { id: agent.id }).then((d) => d.agentPromptVersions), [agent.id]);
  const active = versions.data?.find((v) => v.active);
  const [draft, setDraft] = useState<string | null>(null);
  const [note, setNote] = useState('');
  const [result, setResult] = useState<string | null>(null);
  const text = draft ?? active?.content ?? '';
  const save = useAction(async () => {
    const d = await gql<{ setAgentPrompt: { version: number; unchanged: boolean } }>(SET_PROMPT, {
      id: agent.id,
      input: { prompt: text, note: note.trim() || undefined },
    });
    setResult(
      d.setAgentPrompt.unchanged
        ? 'Unchanged: this is already the active prompt.'
        : `Saved as version ${d.setAgentPrompt.version}; sessions started from now on use it.`,
    );
    setDraft(null);
    setNote('');
    versions.reload();
    onSaved();
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.run();
  };
  return (
    <>
      <form className="card form" onSubmit={submit} aria-label="Prompt">
        <Field label={`Prompt${active ? ` (active: version ${active.version})` : ''}`}>
          {(id) => <textarea id={id} rows={12} value={text} maxLength={100_000} onChange={(e) => setDraft(e.currentTarget.value)} disabled={agent.archived} />}
        </Field>
        <Field label="Note for this version">{(id) => <input id={id} value={note} maxLength={500} onChange={(e) => setNote(e.currentTarget.value)} />}</Field>
        <ErrorNote error={save.error} prefix="Not saved" />
        {result ? <Notice>{result}</Notice> : null}
        <button type="submit" disabled={save.busy || agent.archived}>
          {save.busy ? 'Saving…' : 'Save prompt'}
        </button>
      </form>
      <h2>Versions</h2>
      <ErrorNote error={versions.error} />
      {versions.data && !versions.data.length ? <Empty>No prompt yet.</Empty> : null}
      <ol className="versions" reversed>
        {versions.data?.map((v) => (
          <li key={v.version} className="card">
            <strong>Version {v.version}</strong> {v.active ? <Badge tone="good">active</Badge> : null}{' '}
            <span className="muted">
              {when(v.createdAt)}
              {v.note ? ` · ${v.note}` : ''}
            </span>
            <details>
              <summary>Show</summary>
              <pre>{v.content}</pre>
              {!v.active && !agent.archived ? (
                <button type="button" className="secondary" onClick={() => setDraft(v.content)}>
                  Edit from this version
                </button>
              ) : null}
            </details>
          </li>
        ))}
      </ol>
    </>
  );
}

const SECRETS = doc`query Secrets($id: String!) { agentSecrets(agentId: $id) { key description } }`;
const SET_SECRET = doc`mutation SetSecret($id: String!, $key: String!, $input: PutAgentSecretInput!) { setAgentSecret(agentId: $id, key: $key, input: $input) }`;
const DELETE_SECRET = doc`mutation DeleteSecret($id: String!, $key: String!) { deleteAgentSecret(agentId: $id, key: $key) }`;

function Secrets({ agentId }: { agentId: string }) {
  const list = useAsync(() => gql<{ agentSecrets: { key: string; description: string }[] }>(SECRETS, { id: agentId }).then((d) => d.agentSecrets), [agentId]);
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [description, setDescription] = useState('');
  const put = useAction(async () => {
    await gql(SET_SECRET, { id: agentId, key: key.trim(), input: { value, description: description.trim() || undefined } });
    setKey('');
    setValue('');
    setDescription('');
    list.reload();
  });
  const remove = useAction(async (k: string) => {
    await gql(DELETE_SECRET, { id: agentId, key: k });
    list.reload();
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void put.run();
  };
  return (
    <>
      <p className="muted">Secret values are write-only: they are encrypted at rest and never shown again, only their keys.</p>
      <ErrorNote error={list.error ?? remove.error} />
      {list.data && !list.data.length ? <Empty>No secrets.</Empty> : null}
      <ul className="cards">
        {list.data?.map((s) => (
          <li key={s.key} className="card row-between">
            <span>
              <code>{s.key}</code> {s.description ? <span className="muted">— {s.description}</span> : null}
            </span>
            <ConfirmButton label="Delete" confirmLabel={`Delete ${s.key}`} busy={remove.busy} onConfirm={() => void remove.run(s.key)} />
          </li>
        ))}
      </ul>
      <form className="card form" onSubmit={submit} aria-labelledby="new-secret">
        <h2 id="new-secret">Set a secret</h2>
        <Field label="Key" hint="Replaces the value when the key exists.">
          {(id, hint) => <input id={id} aria-describedby={hint} value={key} required maxLength={100} onChange={(e) => setKey(e.currentTarget.value)} />}
        </Field>
        <Field label="Value">
          {(id) => <input id={id} type="password" autoComplete="off" value={value} required onChange={(e) => setValue(e.currentTarget.value)} />}
        </Field>
        <Field label="Description">
          {(id) => <input id={id} value={description} maxLength={500} onChange={(e) => setDescription(e.currentTarget.value)} />}
        </Field>
        <ErrorNote error={put.error} prefix="Not saved" />
        <button type="submit" disabled={put.busy || !key.trim() || !value}>
          {put.busy ? 'Saving…' : 'Save secret'}
        </button>
      </form>
    </>
  );
}

function Sessions({ agent }: { agent: Agent }) {
  const list = useAsync(() => listSessions(agent.id), [agent.id]);
  const start = useAction(async () => {
    const s = await startSession(agent.id);
    navigate('sessions', s.id);
  });
  return (
    <>
      <div className="actions">
        <button type="button" onClick={() => void start.run()} disabled={start.busy || agent.archived}>
          {start.busy ? 'Starting…' : 'Start a session'}
        </button>
      </div>
      <ErrorNote error={start.error} prefix="Not started" />
      <ErrorNote error={list.error} />
      {list.data ? <SessionTable sessions={list.data} agentNames={new Map([[agent.id, agent.displayName]])} /> : <Loading what="sessions" />}
    </>
  );
}
