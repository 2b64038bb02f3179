// The agent fields both the create and the edit page show: names, engine and model, reasoning
// effort, capabilities, description.
import { useEffect, useState } from 'react';
import { boot } from '../lib/boot.js';
import { engines, type Engine } from '../lib/engines.js';
import { Field } from '../ui.js';

export interface AgentFields {
  displayName: string;
  description: string;
  agentType: string;
  llm: string;
  reasoningEffort: string;
  capabilities: string[];
}

export function useEngines(): Engine[] {
  const [list, setList] = useState<Engine[]>([]);
  useEffect(() => {
    let live = true;
    engines().then(
      (e) => live && setList(e),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, []);
  return list;
}

export function AgentFieldsForm({ value, onChange, engineLocked }: { value: AgentFields; onChange: (next: AgentFields) => void; engineLocked?: boolean }) {
  const list = useEngines();
  const engine = list.find((e) => e.agentType === value.agentType);
  const efforts = boot().efforts[value.agentType] ?? [];
  const set = <K extends keyof AgentFields>(k: K, v: AgentFields[K]) => onChange({ ...value, [k]: v });
  const toggle = (cap: string, on: boolean) => set('capabilities', on ? [...value.capabilities, cap] : value.capabilities.filter((c) => c !== cap));
  return (
    <>
      <Field label="Display name">
        {(id) => <input id={id} value={value.displayName} maxLength={60} required onChange={(e) => set('displayName', e.currentTarget.value)} />}
      </Field>
      <Field label="Description">
        {(id) => <input id={id} value={value.description} maxLength={500} onChange={(e) => set('description', e.currentTarget.value)} />}
      </Field>
      <div className="row">
        <Field label="Engine" hint={engineLocked ? 'The engine is chosen when the agent is created.' : undefined}>
          {(id, hint) => (
            <select
              id={id}
              aria-describedby={hint}
              value={value.agentType}
              disabled={engineLocked}
              onChange={(e) => {
                const next = list.find((x) => x.agentType === e.currentTarget.value);
                onChange({ ...value, agentType: e.currentTarget.value, llm: next?.defaultModel ?? '', reasoningEffort: '' });
              }}
            >
              {(list.length ? list.map((e) => e.agentType) : [value.agentType]).map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Model">
          {(id) => (
            <select id={id} value={value.llm} onChange={(e) => set('llm', e.currentTarget.value)}>
              {!engine ? <option value={value.llm}>{value.llm || 'engine default'}</option> : null}
              {engine?.models.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.id}
                  {m.id === engine.defaultModel ? ' (default)' : ''}
                  {m.provider === 'demo' ? ' (demo: echoes your message, no key, no cost)' : ''}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Reasoning effort">
          {(id) => (
            <select id={id} value={value.reasoningEffort} disabled={!efforts.length} onChange={(e) => set('reasoningEffort', e.currentTarget.value)}>
              <option value="">engine default</option>
              {efforts.map((x) => (
                <option key={x} value={x}>
                  {x}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <fieldset>
        <legend>Capabilities</legend>
        <p className="muted">Extra tools the agent may use; none unless chosen.</p>
        <div className="checks">
          {boot().capabilities.map((c) => (
            <label key={c} className="choice">
              <input type="checkbox" checked={value.capabilities.includes(c)} onChange={(e) => toggle(c, e.currentTarget.checked)} /> {c}
            </label>
          ))}
        </div>
      </fieldset>
    </>
  );
}
