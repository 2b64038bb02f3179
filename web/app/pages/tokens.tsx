// API tokens (the spec's web settings): mint read/write/admin, personal or for one universe,
// shown once; list; revoke. Only a signed-in browser may mint or revoke.
import { useState, type FormEvent } from 'react';
import { doc, gql } from '../../shared/graphql.js';
import { useAction, useAsync } from '../lib/use-async.js';
import { when } from '../lib/format.js';
import { Badge, ConfirmButton, Empty, ErrorNote, Field, Loading, Page, ShownOnce } from '../ui.js';
import type { Me } from '../lib/account.js';
import { Table } from '../table.js';

type Scope = 'read' | 'write' | 'admin';

interface ApiToken {
  id: string;
  name: string;
  scope: Scope;
  universe: string | null;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}

const FIELDS = 'id name scope universe prefix createdAt lastUsedAt expiresAt revokedAt';
const LIST = doc`query Tokens { apiTokens(first: 200, includeRevoked: true) { edges { node { ${FIELDS} } } } }`;
const CREATE = doc`mutation CreateToken($input: CreateApiTokenInput!) { createApiToken(input: $input) { token apiToken { ${FIELDS} } } }`;
const REVOKE = doc`mutation RevokeToken($id: String!) { revokeApiToken(id: $id) { ${FIELDS} } }`;

const SCOPES: [Scope, string][] = [
  ['read', 'read — look only'],
  ['write', 'write — read, create agents and sessions, send messages'],
  ['admin', 'admin — everything, including webhooks'],
];

const EXPIRY: [string, string][] = [
  ['', 'never'],
  ['7', 'in 7 days'],
  ['30', 'in 30 days'],
  ['90', 'in 90 days'],
  ['365', 'in a year'],
];

function status(t: ApiToken) {
  if (t.revokedAt) return <Badge tone="bad">revoked</Badge>;
  if (t.expiresAt && new Date(t.expiresAt) <= new Date()) return <Badge tone="warn">expired</Badge>;
  return <Badge tone="good">active</Badge>;
}

export function TokensPage({ me }: { me: Me }) {
  const list = useAsync(() => gql<{ apiTokens: { edges: { node: ApiToken }[] } }>(LIST).then((d) => d.apiTokens.edges.map((e) => e.node)), []);
  const [name, setName] = useState('');
  const [scope, setScope] = useState<Scope>('read');
  const [universe, setUniverse] = useState('');
  const [expiry, setExpiry] = useState('');
  const [minted, setMinted] = useState<{ token: string; apiToken: ApiToken } | null>(null);

  const create = useAction(async () => {
    const expiresAt = expiry ? new Date(Date.now() + Number(expiry) * 86_400_000).toISOString() : null;
    const d = await gql<{ createApiToken: { token: string; apiToken: ApiToken } }>(CREATE, {
      input: { name: name.trim(), scope, universe: universe || null, expiresAt },
    });
    setMinted(d.createApiToken);
    setName('');
    list.set([d.createApiToken.apiToken, ...(list.data ?? [])]);
  });
  const revoke = useAction(async (id: string) => {
    const d = await gql<{ revokeApiToken: ApiToken }>(REVOKE, { id });
    list.set((list.data ?? []).map((t) => (t.id === id ? d.revokeApiToken : t)));
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run();
  };

  return (
    <Page title="API tokens">
      <p className="muted">
        Tokens let programs call the REST API (<code>/v1</code>) and GraphQL as you. A universe token acts only in that universe; a personal token can act in
        any of yours with the <code>X-Universe</code> header.
      </p>
      {minted ? (
        <ShownOnce label={`Token “${minted.apiToken.name}”`} value={minted.token}>
          <p className="muted">
            Try it:{' '}
            <code>
              curl -H "Authorization: Bearer {minted.token}" {location.origin}/v1/whoami
            </code>
          </p>
          <button type="button" className="secondary" onClick={() => setMinted(null)}>
            Done
          </button>
        </ShownOnce>
      ) : null}
      <form className="card form" onSubmit={submit} aria-labelledby="new-token">
        <h2 id="new-token">New token</h2>
        <Field label="Name">
          {(id) => <input id={id} value={name} onChange={(e) => setName(e.currentTarget.value)} required maxLength={100} placeholder="e.g. laptop script" />}
        </Field>
        <fieldset>
          <legend>Scope</legend>
          {SCOPES.map(([value, label]) => (
            <label key={value} className="choice">
              <input type="radio" name="scope" value={value} checked={scope === value} onChange={() => setScope(value)} /> {label}
            </label>
          ))}
        </fieldset>
        <Field label="Universe" hint="Personal tokens are not bound to a universe.">
          {(id, hint) => (
            <select id={id} aria-describedby={hint} value={universe} onChange={(e) => setUniverse(e.currentTarget.value)}>
              <option value="">Personal (any of my universes)</option>
              {me.universes.map((u) => (
                <option key={u.slug} value={u.slug}>
                  Only {u.name} · {u.slug}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Expires">
          {(id) => (
            <select id={id} value={expiry} onChange={(e) => setExpiry(e.currentTarget.value)}>
              {EXPIRY.map(([v, l]) => (
                <option key={v} value={v}>
                  {l}
                </option>
              ))}
            </select>
          )}
        </Field>
        <ErrorNote error={create.error} prefix="Not created" />
        <button type="submit" disabled={create.busy || !name.trim()}>
          {create.busy ? 'Creating…' : 'Create token'}
        </button>
      </form>

      <h2>Your tokens</h2>
      <ErrorNote error={list.error} />
      <ErrorNote error={revoke.error} prefix="Not revoked" />
      {list.loading && !list.data ? <Loading what="tokens" /> : null}
      {list.data && !list.data.length ? <Empty>No tokens yet.</Empty> : null}
      {list.data?.length ? (
        <Table
          rows={list.data}
          rowKey={(t) => t.id}
          rowProps={(t) => ({ 'data-token-id': t.id })}
          columns={[
            { label: 'Name', cell: (t) => t.name },
            { label: 'Scope', cell: (t) => t.scope },
            { label: 'Universe', cell: (t) => t.universe ?? 'personal' },
            { label: 'Starts with', cell: (t) => <code>{t.prefix}…</code> },
            { label: 'Created', cell: (t) => when(t.createdAt) },
            { label: 'Last used', cell: (t) => when(t.lastUsedAt) },
            { label: 'Expires', cell: (t) => (t.expiresAt ? when(t.expiresAt) : 'never') },
            { label: 'Status', cell: status },
            {
              label: 'Actions',
              hideLabel: true,
              cell: (t) =>
                t.revokedAt ? null : (
                  <ConfirmButton label="Revoke" confirmLabel={`Revoke ${t.name}`} busy={revoke.busy} onConfirm={() => void revoke.run(t.id)} />
                ),
            },
          ]}
        />
      ) : null}
    </Page>
  );
}
