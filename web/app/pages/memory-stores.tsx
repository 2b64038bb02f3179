// Memory stores (issue #30): the stores of the universe (create, edit, archive) and, per store,
// its memories as a tree by path: view and edit one (the edit carries the hash it was made from,
// so an agent's newer write is never overwritten), delete, and its versions (who changed what,
// the lines each changed from the one before it, restore one, redact one).
import { useState, type FormEvent } from 'react';
import { doc, gql } from '../../shared/graphql.js';
import { when } from '../lib/format.js';
import { href } from '../lib/router.js';
import { useAction, useAsync } from '../lib/use-async.js';
import { Badge, ConfirmButton, Empty, ErrorNote, Field, Loading, Notice } from '../ui.js';
import { ResourcePage, text, type FieldSpec, type Values } from '../resource.js';
import { lineDiff } from '../lib/line-diff.js';

interface Store {
  id: string;
  name: string;
  description: string | null;
  archivedAt: string | null;
  updatedAt: string;
}
interface MemoryRow {
  id: string;
  path: string;
  sizeBytes: number;
  updatedAt: string;
}
interface Memory extends MemoryRow {
  content: string;
  contentSha256: string;
}
interface Version {
  id: string;
  operation: string;
  path: string | null;
  content: string | null;
  sizeBytes: number | null;
  contentSha256: string | null;
  createdAt: string;
  redactedAt: string | null;
  actor: { type: 'session'; sessionId: string } | { type: 'user'; userId: string };
}

const STORE = 'id name description archivedAt updatedAt';
const LIST = doc`query MemoryStores { memoryStores(first: 100) { edges { node { ${STORE} } } } }`;
const CREATE = doc`mutation CreateMemoryStore($input: CreateMemoryStoreInput!) { createMemoryStore(input: $input) { id } }`;
const UPDATE = doc`mutation UpdateMemoryStore($id: String!, $input: UpdateMemoryStoreInput!) { updateMemoryStore(id: $id, input: $input) { id } }`;
const ARCHIVE = doc`mutation ArchiveMemoryStore($id: String!) { archiveMemoryStore(id: $id) { id archivedAt } }`;
const MEMORIES = doc`query Memories($store: String!) { memories(memoryStoreId: $store, limit: 1000) { data { id path sizeBytes updatedAt } nextPage } }`;
const MEMORY = doc`query Memory($store: String!, $id: String!) { memory(memoryStoreId: $store, id: $id) { id path sizeBytes updatedAt content contentSha256 } }`;
const CREATE_MEMORY = doc`mutation CreateMemory($store: String!, $input: CreateMemoryInput!) { createMemory(memoryStoreId: $store, input: $input) { id } }`;
const UPDATE_MEMORY = doc`mutation UpdateMemory($store: String!, $id: String!, $input: UpdateMemoryInput!) { updateMemory(memoryStoreId: $store, id: $id, input: $input) { id } }`;
const DELETE_MEMORY = doc`mutation DeleteMemory($store: String!, $id: String!, $hash: String) { deleteMemory(memoryStoreId: $store, id: $id, expectedContentSha256: $hash) { id } }`;
const VERSIONS = doc`query MemoryVersions($store: String!, $memory: String!) { memoryVersions(memoryStoreId: $store, memoryId: $memory, first: 50) { edges { node { id operation path content sizeBytes contentSha256 createdAt redactedAt actor { ... on MemorySessionActor { type sessionId } ... on MemoryUserActor { type userId } } } } } }`;
const RESTORE = doc`mutation RestoreMemoryVersion($store: String!, $id: String!) { restoreMemoryVersion(memoryStoreId: $store, id: $id) { id } }`;
const REDACT = doc`mutation RedactMemoryVersion($store: String!, $id: String!) { redactMemoryVersion(memoryStoreId: $store, id: $id) { id } }`;

const fields: FieldSpec[] = [
  { name: 'name', label: 'Name', required: true, maxLength: 255 },
  { name: 'description', label: 'Description', kind: 'textarea', rows: 2, maxLength: 1024, hint: 'Shown to the agent when a session mounts the store.' },
];
const input = (v: Values) => ({ name: text(v.name), description: text(v.description) || null });

const who = (v: Version) => (v.actor.type === 'session' ? `session ${v.actor.sessionId}` : `user ${v.actor.userId}`);
const depthOf = (p: string) => p.split('/').length - 2;

/**
 * What `v` held before it: the older version's content ('' before a creation or after a
 * deletion), or null when that is not known (redacted, or older than the versions loaded).
 */
function contentBefore(v: Version, older: Version | undefined): string | null {
  if (!older) return v.operation === 'created' ? '' : null;
  if (older.operation === 'deleted') return '';
  return older.content;
}

/** The version's lines against the one before it: removed ones struck through, added ones marked. */
function Changes({ v, older }: { v: Version; older: Version | undefined }) {
  if (v.content === null) return null;
  const before = contentBefore(v, older);
  if (before === null) {
    return (
      <div>
        <small className="muted">{older ? 'The previous version is redacted: no diff.' : 'The previous version is not loaded: no diff.'}</small>
      </div>
    );
  }
  const lines = lineDiff(before, v.content).map((l, n) => ({ ...l, key: `${l.kind}${n}` }));
  const changed = lines.filter((l) => l.kind !== 'same').length;
  return (
    <details className="changes">
      <summary>
        Changes ({changed ? `${lines.filter((l) => l.kind === 'del').length} removed, ${lines.filter((l) => l.kind === 'add').length} added` : 'none'})
      </summary>
      <pre className="diff">
        {lines.map((l) =>
          l.kind === 'add' ? (
            <ins key={l.key}>+ {l.text}</ins>
          ) : l.kind === 'del' ? (
            <del key={l.key}>- {l.text}</del>
          ) : (
            <span key={l.key}>
              {'  '}
              {l.text}
            </span>
          ),
        )}
      </pre>
    </details>
  );
}

function Versions({ store, memory, onChanged }: { store: string; memory: string; onChanged: () => void }) {
  const versions = useAsync(
    () => gql<{ memoryVersions: { edges: { node: Version }[] } }>(VERSIONS, { store, memory }).then((d) => d.memoryVersions.edges.map((e) => e.node)),
    [store, memory],
  );
  const act = useAction(async (run: () => Promise<unknown>) => {
    await run();
    versions.reload();
    onChanged();
  });
  if (!versions.data) return versions.loading ? <Loading what="versions" /> : <ErrorNote error={versions.error} />;
  return (
    <section aria-label="Versions">
      <h3>Versions</h3>
      <ErrorNote error={act.error} prefix="Not done" />
      <ol className="versions">
        {versions.data.map((v, i, all) => (
          <li key={v.id}>
            <Badge tone={v.operation === 'deleted' ? 'warn' : 'plain'}>{v.operation}</Badge> {when(v.createdAt)} by {who(v)}
            {v.redactedAt ? (
              <>
                {' '}
                <Badge tone="bad">redacted</Badge>
              </>
            ) : (
              <>
                {' '}
                · {v.path} · {v.sizeBytes ?? 0} bytes
              </>
            )}
            <Changes v={v} older={all[i + 1]} />
            {v.content !== null ? (
              <details>
                <summary>Content</summary>
                <pre>{v.content}</pre>
              </details>
            ) : null}
            <span className="row-actions">
              {v.content !== null ? (
                <button type="button" className="secondary" disabled={act.busy} onClick={() => void act.run(() => gql(RESTORE, { store, id: v.id }))}>
                  Restore
                </button>
              ) : null}
              {!v.redactedAt ? (
                <ConfirmButton
                  label="Redact"
                  confirmLabel="Redact this version"
                  busy={act.busy}
                  onConfirm={() => void act.run(() => gql(REDACT, { store, id: v.id }))}
                />
              ) : null}
            </span>
          </li>
        ))}
      </ol>
    </section>
  );
}

function MemoryEditor({ store, id, onChanged }: { store: string; id: string; onChanged: () => void }) {
  const memory = useAsync(() => gql<{ memory: Memory }>(MEMORY, { store, id }).then((d) => d.memory), [store, id]);
  const [draft, setDraft] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const save = useAction(async (m: Memory) => {
    await gql(UPDATE_MEMORY, { store, id, input: { content: draft ?? m.content, expectedContentSha256: m.contentSha256 } });
    setDraft(null);
    setNotice(`Saved ${m.path}.`);
    memory.reload();
    onChanged();
  });
  const remove = useAction(async (m: Memory) => {
    await gql(DELETE_MEMORY, { store, id, hash: m.contentSha256 });
    onChanged();
  });
  if (!memory.data) return memory.loading ? <Loading what="the memory" /> : <ErrorNote error={memory.error} />;
  const m = memory.data;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.run(m);
  };
  return (
    <div className="card">
      <form onSubmit={submit} aria-label={`Memory ${m.path}`}>
        <h3>{m.path}</h3>
        {notice ? <Notice>{notice}</Notice> : null}
        <Field label="Content" hint={`${m.sizeBytes} bytes · sha256 ${m.contentSha256.slice(0, 12)}…`}>
          {(fid, hint) => <textarea id={fid} aria-describedby={hint} rows={8} value={draft ?? m.content} onChange={(e) => setDraft(e.currentTarget.value)} />}
        </Field>
        <ErrorNote error={save.error ?? remove.error} prefix="Not saved" />
        <div className="actions">
          <button type="submit" disabled={save.busy}>
            Save memory
          </button>
          <ConfirmButton label="Delete memory" confirmLabel={`Delete ${m.path}`} busy={remove.busy} onConfirm={() => void remove.run(m)} />
        </div>
      </form>
      <Versions
        store={store}
        memory={id}
        onChanged={() => {
          memory.reload();
          onChanged();
        }}
      />
    </div>
  );
}

function Memories({ store }: { store: Store }) {
  const memories = useAsync(() => gql<{ memories: { data: MemoryRow[] } }>(MEMORIES, { store: store.id }).then((d) => d.memories.data), [store.id]);
  const [open, setOpen] = useState<string | null>(null);
  const [path, setPath] = useState('');
  const [content, setContent] = useState('');
  const create = useAction(async () => {
    await gql(CREATE_MEMORY, { store: store.id, input: { path: path.trim(), content } });
    setPath('');
    setContent('');
    memories.reload();
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run();
  };
  return (
    <>
      <ErrorNote error={memories.error} />
      {memories.data && !memories.data.length ? <Empty>No memories yet.</Empty> : null}
      {memories.data?.length ? (
        <ul className="memory-tree" aria-label="Memories by path">
          {(memories.data ?? []).map((m) => (
            <li key={m.id} style={{ paddingLeft: `${depthOf(m.path)}em` }}>
              <button type="button" className="link" aria-expanded={open === m.id} onClick={() => setOpen(open === m.id ? null : m.id)}>
                {m.path}
              </button>{' '}
              <small className="muted">
                {m.sizeBytes} bytes · {when(m.updatedAt)}
              </small>
            </li>
          ))}
        </ul>
      ) : null}
      {open ? (
        <MemoryEditor
          key={open}
          store={store.id}
          id={open}
          onChanged={() => {
            memories.reload();
          }}
        />
      ) : null}
      {!store.archivedAt ? (
        <form className="card form" onSubmit={submit} aria-label="New memory">
          <h3>New memory</h3>
          <Field label="Path" hint="Starts with /, e.g. /preferences/style.md">
            {(fid, hint) => <input id={fid} aria-describedby={hint} required value={path} onChange={(e) => setPath(e.currentTarget.value)} />}
          </Field>
          <Field label="Memory content">{(fid) => <textarea id={fid} rows={4} value={content} onChange={(e) => setContent(e.currentTarget.value)} />}</Field>
          <ErrorNote error={create.error} prefix="Not saved" />
          <div className="actions">
            <button type="submit" disabled={create.busy}>
              Add memory
            </button>
          </div>
        </form>
      ) : null}
    </>
  );
}

export function MemoryStoresPage() {
  return (
    <ResourcePage<Store>
      title="Memory stores"
      noun="memory store"
      rowKey={(s) => s.id}
      rowName={(s) => s.name}
      intro={<>Small text documents agents keep across sessions. Mount a store when starting a session; every change is a version you can restore or redact.</>}
      empty="No memory stores yet."
      load={() => gql<{ memoryStores: { edges: { node: Store }[] } }>(LIST).then((d) => d.memoryStores.edges.map((e) => e.node))}
      columns={[
        {
          label: 'Store',
          cell: (s) => (
            <>
              {s.name}
              <br />
              <small className="muted">
                <code>{s.id}</code>
              </small>
              {s.description ? (
                <>
                  <br />
                  <small>{s.description}</small>
                </>
              ) : null}
            </>
          ),
        },
        { label: 'Updated', cell: (s) => when(s.updatedAt) },
        { label: 'State', cell: (s) => (s.archivedAt ? <Badge tone="warn">archived</Badge> : <Badge tone="good">active</Badge>) },
      ]}
      create={{ fields, submit: async (v) => void (await gql(CREATE, { input: input(v) })) }}
      edit={{
        fields,
        show: (s) => !s.archivedAt,
        initial: (s) => ({ name: s.name, description: s.description ?? '' }),
        submit: (s, v) => gql(UPDATE, { id: s.id, input: input(v) }),
      }}
      remove={{ label: 'Archive', show: (s) => !s.archivedAt, run: (s) => gql(ARCHIVE, { id: s.id }) }}
      detail={{ label: 'Memories', render: (s) => <Memories key={s.id} store={s} /> }}
      hidden={{ test: (s) => !!s.archivedAt, label: 'Show archived memory stores' }}
    />
  );
}

// ---- on a session's page: the memory stores it mounts ----

interface Mount {
  type: string;
  id: string;
  memoryStoreId?: string;
  mountPath?: string;
  access?: string;
}
const MOUNTS = doc`query SessionMemoryMounts($id: String!) { sessionResources(sessionId: $id) { data { ... on MemoryStoreResource { type id memoryStoreId mountPath access } } } }`;

/** The session's mounted memory stores (nothing when it has none). */
export function SessionMemoryMounts({ sessionId }: { sessionId: string }) {
  const mounts = useAsync(
    () => gql<{ sessionResources: { data: Mount[] } }>(MOUNTS, { id: sessionId }).then((d) => d.sessionResources.data.filter((r) => r.type === 'memory_store')),
    [sessionId],
  );
  if (!mounts.data?.length) return null;
  return (
    <section className="card compact" aria-label="Memory stores">
      <h2>Memory stores</h2>
      <ul>
        {mounts.data.map((m) => (
          <li key={m.id}>
            <code>{m.mountPath}</code> · {m.access === 'read_only' ? 'read only' : 'read and write'} ·{' '}
            <a href={href('memory-stores')}>
              <code>{m.memoryStoreId}</code>
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}
