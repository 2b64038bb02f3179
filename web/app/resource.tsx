// The one generic page for what the API manages (environments, vaults, routines, webhooks,
// files, skills, model subscriptions, channels): a list, a form to create, the same form to
// edit a row, a two-step delete, extra row actions and a detail panel. Each page only declares
// its columns, fields and GraphQL calls.
import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { useAction, useAsync } from './lib/use-async.js';
import { ConfirmButton, Empty, ErrorNote, Field, Loading, Notice, Page, ShownOnce } from './ui.js';
import { Table, type Column } from './table.js';

export type FormValue = string | string[] | boolean | File | null;
export type Values = Record<string, FormValue>;

export interface FieldSpec {
  name: string;
  label: string;
  /** lines: a textarea read as one item per line; checks: several checkboxes (a string[]). */
  kind?: 'text' | 'textarea' | 'password' | 'url' | 'select' | 'lines' | 'checks' | 'checkbox' | 'file';
  required?: boolean;
  hint?: string;
  placeholder?: string;
  options?: readonly (readonly [value: string, label: string])[];
  rows?: number;
  maxLength?: number;
}

/** Readers for a form's values (what the GraphQL inputs want). */
export const text = (v: FormValue | undefined): string => (typeof v === 'string' ? v.trim() : '');
/** An optional text: undefined (left out of the input) when empty. */
export const optional = (v: FormValue | undefined): string | undefined => text(v) || undefined;
export const lines = (v: FormValue | undefined): string[] =>
  text(v)
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
export const list = (v: FormValue | undefined): string[] => (Array.isArray(v) ? v : []);

function Control({ f, value, set }: { f: FieldSpec; value: FormValue | undefined; set: (v: FormValue) => void }) {
  const kind = f.kind ?? 'text';
  if (kind === 'checks') {
    const chosen = list(value);
    return (
      <fieldset>
        <legend>{f.label}</legend>
        <div className="checks">
          {f.options?.map(([v, l]) => (
            <label key={v} className="choice">
              <input
                type="checkbox"
                checked={chosen.includes(v)}
                onChange={(e) => set(e.currentTarget.checked ? [...chosen, v] : chosen.filter((c) => c !== v))}
              />{' '}
              {l}
            </label>
          ))}
        </div>
        {f.hint ? <small className="muted">{f.hint}</small> : null}
      </fieldset>
    );
  }
  if (kind === 'checkbox') {
    return (
      <label className="choice">
        <input type="checkbox" checked={value === true} onChange={(e) => set(e.currentTarget.checked)} /> {f.label}
      </label>
    );
  }
  return (
    <Field label={f.label} hint={f.hint}>
      {(id, hint) => {
        const common = { id, 'aria-describedby': hint, required: f.required, placeholder: f.placeholder, maxLength: f.maxLength };
        const str = typeof value === 'string' ? value : '';
        switch (kind) {
          case 'textarea':
          case 'lines':
            return <textarea {...common} rows={f.rows ?? (kind === 'lines' ? 3 : 5)} value={str} onChange={(e) => set(e.currentTarget.value)} />;
          case 'select':
            return (
              <select {...common} value={str} onChange={(e) => set(e.currentTarget.value)}>
                {f.options?.map(([v, l]) => (
                  <option key={v} value={v}>
                    {l}
                  </option>
                ))}
              </select>
            );
          case 'file':
            return <input id={id} aria-describedby={hint} required={f.required} type="file" onChange={(e) => set(e.currentTarget.files?.[0] ?? null)} />;
          default:
            return (
              <input
                {...common}
                type={kind === 'password' ? 'password' : kind === 'url' ? 'url' : 'text'}
                autoComplete={kind === 'password' ? 'off' : undefined}
                value={str}
                onChange={(e) => set(e.currentTarget.value)}
              />
            );
        }
      }}
    </Field>
  );
}

/** A card with fields and a submit button; `onSubmit` throws to show an error and keep the values. */
export function FormCard({
  title,
  fields,
  initial = {},
  submitLabel,
  onSubmit,
  onCancel,
}: {
  title: string;
  fields: readonly FieldSpec[];
  initial?: Values;
  submitLabel: string;
  onSubmit: (v: Values) => Promise<void>;
  onCancel?: () => void;
}) {
  const [values, setValues] = useState<Values>(initial);
  const action = useAction(onSubmit);
  const headingId = `form-${title.replace(/\W+/g, '-').toLowerCase()}`;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void action.run(values);
  };
  return (
    <form className="card form" onSubmit={submit} aria-labelledby={headingId}>
      <h2 id={headingId}>{title}</h2>
      {fields.map((f) => (
        <Control key={f.name} f={f} value={values[f.name]} set={(v) => setValues((old) => ({ ...old, [f.name]: v }))} />
      ))}
      <ErrorNote error={action.error} prefix="Not saved" />
      <div className="actions">
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Saving…' : submitLabel}
        </button>
        {onCancel ? (
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}

/** A secret the API answers once (a webhook's signing secret). */
export interface Created {
  secret?: { label: string; value: string };
}

export interface RowAction<T> {
  label: string;
  run: (row: T) => Promise<unknown>;
  show?: (row: T) => boolean;
}

export interface ResourcePageProps<T> {
  title: string;
  /** Singular, for buttons and notices ("environment"). */
  noun: string;
  intro: ReactNode;
  empty: ReactNode;
  load: () => Promise<T[]>;
  rowKey: (row: T) => string;
  rowName: (row: T) => string;
  columns: readonly Column<T>[];
  create?: { fields: readonly FieldSpec[]; initial?: Values; submitLabel?: string; submit: (v: Values) => Promise<Created | void> };
  edit?: {
    fields: readonly FieldSpec[] | ((row: T) => readonly FieldSpec[]);
    initial: (row: T) => Values;
    submit: (row: T, v: Values) => Promise<unknown>;
    show?: (row: T) => boolean;
    label?: string;
  };
  remove?: { label?: string; run: (row: T) => Promise<unknown>; show?: (row: T) => boolean };
  actions?: readonly RowAction<T>[];
  detail?: { label: string; render: (row: T, reload: () => void) => ReactNode };
  /** Rows hidden unless asked for (archived ones), with the toggle's label. */
  hidden?: { test: (row: T) => boolean; label: string };
  /** Shown above the list (e.g. a page's own extra form). */
  children?: ReactNode;
  /** Shown under the title (a page's tabs). */
  nav?: ReactNode;
}

type Mode<T> = { kind: 'list' } | { kind: 'create' } | { kind: 'edit'; row: T };

export function ResourcePage<T>(p: ResourcePageProps<T>) {
  const rows = useAsync(p.load, []);
  const [mode, setMode] = useState<Mode<T>>({ kind: 'list' });
  const [notice, setNotice] = useState('');
  const [secret, setSecret] = useState<Created['secret'] | null>(null);
  const [openKey, setOpenKey] = useState<string | null>(null);
  const [showHidden, setShowHidden] = useState(false);
  const act = useAction(async (label: string, run: () => Promise<unknown>, name: string) => {
    setNotice('');
    await run();
    setNotice(`${label} ${name}: done.`);
    rows.reload();
  });

  // Back from another tab (a connect link claimed, a webhook delivered): show what changed.
  const reload = rows.reload;
  useEffect(() => {
    window.addEventListener('focus', reload);
    return () => window.removeEventListener('focus', reload);
  }, [reload]);

  const visible = (rows.data ?? []).filter((r) => showHidden || !p.hidden?.test(r));
  const open = openKey === null ? null : (visible.find((r) => p.rowKey(r) === openKey) ?? null);

  const columns: Column<T>[] = [...p.columns];
  if (p.edit || p.remove || p.actions?.length || p.detail) {
    columns.push({
      label: 'Actions',
      hideLabel: true,
      cell: (r) => {
        const name = p.rowName(r);
        return (
          <span className="row-actions">
            {p.detail ? (
              <button
                type="button"
                className="secondary"
                aria-expanded={openKey === p.rowKey(r)}
                onClick={() => setOpenKey(openKey === p.rowKey(r) ? null : p.rowKey(r))}
              >
                {p.detail.label}
              </button>
            ) : null}
            {p.edit && (p.edit.show?.(r) ?? true) ? (
              <button
                type="button"
                className="secondary"
                onClick={() => {
                  setNotice('');
                  setMode({ kind: 'edit', row: r });
                }}
              >
                {p.edit.label ?? 'Edit'}
              </button>
            ) : null}
            {p.actions
              ?.filter((a) => a.show?.(r) ?? true)
              .map((a) => (
                <button key={a.label} type="button" className="secondary" disabled={act.busy} onClick={() => void act.run(a.label, () => a.run(r), name)}>
                  {a.label}
                </button>
              ))}
            {p.remove && (p.remove.show?.(r) ?? true) ? (
              <ConfirmButton
                label={p.remove.label ?? 'Delete'}
                confirmLabel={`${p.remove.label ?? 'Delete'} ${name}`}
                busy={act.busy}
                onConfirm={() => void act.run(p.remove!.label ?? 'Delete', () => p.remove!.run(r), name)}
              />
            ) : null}
          </span>
        );
      },
    });
  }

  const newLabel = `New ${p.noun}`;
  return (
    <Page
      title={p.title}
      actions={
        p.create && mode.kind === 'list' ? (
          <button
            type="button"
            onClick={() => {
              setNotice('');
              setSecret(null);
              setMode({ kind: 'create' });
            }}
          >
            {newLabel}
          </button>
        ) : null
      }
    >
      {p.nav}
      <p className="muted">{p.intro}</p>
      {notice ? <Notice>{notice}</Notice> : null}
      {secret ? (
        <ShownOnce label={secret.label} value={secret.value}>
          <button type="button" className="secondary" onClick={() => setSecret(null)}>
            Done
          </button>
        </ShownOnce>
      ) : null}
      {mode.kind === 'create' && p.create ? (
        <FormCard
          title={newLabel}
          fields={p.create.fields}
          initial={p.create.initial}
          submitLabel={p.create.submitLabel ?? `Create ${p.noun}`}
          onCancel={() => setMode({ kind: 'list' })}
          onSubmit={async (v) => {
            const created = await p.create!.submit(v);
            setMode({ kind: 'list' });
            setNotice(`Created the ${p.noun}.`);
            if (created && created.secret) setSecret(created.secret);
            rows.reload();
          }}
        />
      ) : null}
      {mode.kind === 'edit' && p.edit ? (
        <FormCard
          key={p.rowKey(mode.row)}
          title={`Edit ${p.rowName(mode.row)}`}
          initial={p.edit.initial(mode.row)}
          submitLabel="Save"
          fields={typeof p.edit.fields === 'function' ? p.edit.fields(mode.row) : p.edit.fields}
          onCancel={() => setMode({ kind: 'list' })}
          onSubmit={async (v) => {
            await p.edit!.submit(mode.row, v);
            setMode({ kind: 'list' });
            setNotice(`Saved: ${p.rowName(mode.row)}.`);
            rows.reload();
          }}
        />
      ) : null}
      {p.children}
      <ErrorNote error={rows.error} />
      <ErrorNote error={act.error} prefix="Not done" />
      {p.hidden && rows.data?.some(p.hidden.test) ? (
        <label className="choice">
          <input type="checkbox" checked={showHidden} onChange={(e) => setShowHidden(e.currentTarget.checked)} /> {p.hidden.label}
        </label>
      ) : null}
      {!rows.data && rows.loading ? <Loading what={p.title.toLowerCase()} /> : null}
      {rows.data && !visible.length ? <Empty>{p.empty}</Empty> : null}
      {visible.length ? <Table rows={visible} columns={columns} rowKey={p.rowKey} caption={`${visible.length} ${p.title.toLowerCase()}`} /> : null}
      {open && p.detail ? (
        <section className="card detail" aria-label={`${p.detail.label}: ${p.rowName(open)}`}>
          <h2>
            {p.detail.label} · {p.rowName(open)}
          </h2>
          {p.detail.render(open, rows.reload)}
        </section>
      ) : null}
    </Page>
  );
}
