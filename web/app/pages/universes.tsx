// Universes: the ones you can act in, which one the dashboard acts in (switch), and a new one.
import { useState, type FormEvent } from 'react';
import { doc, gql } from '../../shared/graphql.js';
import { useAction } from '../lib/use-async.js';
import { Badge, ErrorNote, Field, Notice, Page } from '../ui.js';
import type { Me } from '../lib/account.js';

const CREATE = doc`mutation CreateUniverse($input: CreateUniverseInput!) { createUniverse(input: $input) { slug name isPersonal } }`;

export function UniversesPage({ me, onChanged }: { me: Me; onChanged: () => void }) {
  const [slug, setSlug] = useState('');
  const [name, setName] = useState('');
  const [created, setCreated] = useState<string | null>(null);
  const create = useAction(async () => {
    const d = await gql<{ createUniverse: { slug: string } }>(CREATE, { input: { slug: slug.trim(), name: name.trim() || undefined } });
    setCreated(d.createUniverse.slug);
    setSlug('');
    setName('');
    onChanged();
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run();
  };
  const current = me.whoami.universe.slug;
  return (
    <Page title="Universes">
      <p className="muted">A universe holds agents, sessions, files and a wallet. The dashboard acts in the one chosen at the top; switch there.</p>
      <ul className="cards">
        {me.universes.map((u) => (
          <li key={u.slug} className="card">
            <strong>{u.name}</strong> <code>{u.slug}</code> {u.isPersonal ? <Badge>personal</Badge> : null}{' '}
            {u.slug === current ? <Badge tone="good">current</Badge> : null}
          </li>
        ))}
      </ul>
      <form className="card form" onSubmit={submit} aria-labelledby="new-universe">
        <h2 id="new-universe">New universe</h2>
        <Field label="Slug" hint="Lowercase letters, digits and dashes; used in X-Universe and token scopes.">
          {(id, hint) => (
            <input
              id={id}
              aria-describedby={hint}
              value={slug}
              onChange={(e) => setSlug(e.currentTarget.value)}
              required
              pattern="[a-z0-9][a-z0-9-]*[a-z0-9]"
              minLength={3}
              maxLength={40}
            />
          )}
        </Field>
        <Field label="Name">{(id) => <input id={id} value={name} onChange={(e) => setName(e.currentTarget.value)} maxLength={120} />}</Field>
        <ErrorNote error={create.error} prefix="Not created" />
        {created ? <Notice>Universe {created} created. Choose it in the Universe menu to work in it.</Notice> : null}
        <button type="submit" disabled={create.busy || !slug.trim()}>
          {create.busy ? 'Creating…' : 'Create universe'}
        </button>
      </form>
    </Page>
  );
}
