// Sessions of the universe, with a shortcut to start one for an agent.
import { useState, type FormEvent } from 'react';
import { doc, gql } from '../../shared/graphql.js';
import { useAction, useAsync } from '../lib/use-async.js';
import { navigate } from '../lib/router.js';
import { ErrorNote, Field, Loading, Page } from '../ui.js';
import { SessionTable, listSessions, startSession } from './session-api.js';

// Every agent (archived ones too): the list names them; only active ones can start a session.
const AGENTS = doc`query AgentChoices { agents(first: 100) { edges { node { id displayName archived } } } }`;

export function SessionsPage() {
  const list = useAsync(() => listSessions(), []);
  const all = useAsync(
    () => gql<{ agents: { edges: { node: { id: string; displayName: string; archived: boolean } }[] } }>(AGENTS).then((d) => d.agents.edges.map((e) => e.node)),
    [],
  );
  const agents = { data: all.data?.filter((a) => !a.archived) ?? null, error: all.error };
  const names = new Map((all.data ?? []).map((a) => [a.id, a.displayName]));
  const [agent, setAgent] = useState('');
  const [title, setTitle] = useState('');
  const start = useAction(async () => {
    const s = await startSession(agent || agents.data![0]!.id, title.trim() || undefined);
    navigate('sessions', s.id);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void start.run();
  };
  return (
    <Page title="Sessions">
      {agents.data?.length ? (
        <form className="card form inline" onSubmit={submit} aria-labelledby="start-session">
          <h2 id="start-session">Start a session</h2>
          <Field label="Agent">
            {(id) => (
              <select id={id} value={agent || agents.data![0]!.id} onChange={(e) => setAgent(e.currentTarget.value)}>
                {agents.data!.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.displayName}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Title (optional)">{(id) => <input id={id} value={title} maxLength={120} onChange={(e) => setTitle(e.currentTarget.value)} />}</Field>
          <ErrorNote error={start.error} prefix="Not started" />
          <button type="submit" disabled={start.busy}>
            {start.busy ? 'Starting…' : 'Start'}
          </button>
        </form>
      ) : null}
      <ErrorNote error={list.error ?? agents.error} />
      {list.data ? <SessionTable sessions={list.data} agentNames={names} /> : <Loading what="sessions" />}
    </Page>
  );
}
