// Create an agent: its fields and its first prompt (prompt version 1).
import { useState, type FormEvent } from 'react';
import { doc, gql } from '../../shared/graphql.js';
import { useAction } from '../lib/use-async.js';
import { navigate } from '../lib/router.js';
import { ErrorNote, Field, Page } from '../ui.js';
import { AgentFieldsForm, type AgentFields } from './agent-form.js';

const CREATE = doc`mutation CreateAgent($input: CreateAgentInput) { createAgent(input: $input) { id } }`;

export function NewAgentPage() {
  const [fields, setFields] = useState<AgentFields>({
    displayName: '',
    description: '',
    agentType: 'hermes',
    llm: 'claude-sonnet-4-5',
    reasoningEffort: '',
    capabilities: [],
  });
  const [prompt, setPrompt] = useState('');
  const create = useAction(async () => {
    const input = {
      displayName: fields.displayName.trim(),
      agentType: fields.agentType,
      llm: fields.llm || undefined,
      description: fields.description.trim() || undefined,
      reasoningEffort: fields.reasoningEffort || undefined,
      capabilities: fields.capabilities,
      prompt: prompt.trim() ? prompt : undefined,
    };
    const d = await gql<{ createAgent: { id: string } }>(CREATE, { input });
    navigate('agents', d.createAgent.id);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run();
  };
  return (
    <Page title="New agent">
      <form className="card form" onSubmit={submit}>
        <AgentFieldsForm value={fields} onChange={setFields} />
        <Field label="Prompt" hint="The system prompt; it becomes version 1.">
          {(id, hint) => (
            <textarea id={id} aria-describedby={hint} rows={8} value={prompt} maxLength={100_000} onChange={(e) => setPrompt(e.currentTarget.value)} />
          )}
        </Field>
        <ErrorNote error={create.error} prefix="Not created" />
        <button type="submit" disabled={create.busy || !fields.displayName.trim()}>
          {create.busy ? 'Creating…' : 'Create agent'}
        </button>
      </form>
    </Page>
  );
}
