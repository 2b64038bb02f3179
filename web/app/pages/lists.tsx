// Simple read-only lists: files, skills, routines with their latest runs, webhook endpoints with
// their latest deliveries, and connected model subscriptions.
import type { ReactNode } from 'react';
import { doc, gql } from '../../shared/graphql.js';
import { useAsync } from '../lib/use-async.js';
import { bytes, when } from '../lib/format.js';
import { href } from '../lib/router.js';
import { Badge, Empty, ErrorNote, Loading, Page } from '../ui.js';

function ListPage<T>({ title, what, intro, load, empty, render }: {
  title: string; what: string; intro: ReactNode; load: () => Promise<T[]>; empty: string; render: (rows: T[]) => ReactNode;
}) {
  const list = useAsync(load, []);
  return (
    <Page title={title}>
      <p className="muted">{intro}</p>
      <ErrorNote error={list.error} />
      {!list.data && list.loading ? <Loading what={what} /> : null}
      {list.data && !list.data.length ? <Empty>{empty}</Empty> : null}
      {list.data?.length ? <div className="table-wrap">{render(list.data)}</div> : null}
    </Page>
  );
}

interface FileRow { id: string; filename: string; mimeType: string; sizeBytes: number; createdAt: string }
const FILES = doc`query Files { files(limit: 100) { data { id filename mimeType sizeBytes createdAt } } }`;
export function FilesPage() {
  return (
    <ListPage<FileRow> title="Files" what="files" empty="No files uploaded."
      intro={<>Uploads of this universe (<code>POST /v1/files</code>), newest first; attach them to messages or sessions.</>}
      load={() => gql<{ files: { data: FileRow[] } }>(FILES).then((d) => d.files.data)}
      render={(rows) => (
        <table>
          <thead><tr><th scope="col">File</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col">Uploaded</th></tr></thead>
          <tbody>{rows.map((f) => <tr key={f.id}><td>{f.filename}<br /><small className="muted"><code>{f.id}</code></small></td><td>{f.mimeType}</td><td className="num">{bytes(f.sizeBytes)}</td><td>{when(f.createdAt)}</td></tr>)}</tbody>
        </table>
      )} />
  );
}

interface SkillRow { id: string; displayName: string; latestRevisionId: string | null; updatedAt: string }
const SKILLS = doc`query Skills { skills(first: 100) { edges { node { id displayName latestRevisionId updatedAt } } } }`;
export function SkillsPage() {
  return (
    <ListPage<SkillRow> title="Skills" what="skills" empty="No skills yet."
      intro={<>Skill bundles (a <code>SKILL.md</code> and files) agents can use; each upload is an immutable revision.</>}
      load={() => gql<{ skills: { edges: { node: SkillRow }[] } }>(SKILLS).then((d) => d.skills.edges.map((e) => e.node))}
      render={(rows) => (
        <table>
          <thead><tr><th scope="col">Skill</th><th scope="col">Latest revision</th><th scope="col">Updated</th></tr></thead>
          <tbody>{rows.map((s) => <tr key={s.id}><td>{s.displayName}<br /><small className="muted"><code>{s.id}</code></small></td><td><code>{s.latestRevisionId ?? '—'}</code></td><td>{when(s.updatedAt)}</td></tr>)}</tbody>
        </table>
      )} />
  );
}

interface RunRow { id: string; createdAt: string; sessionId: string | null; error: { type: string; message: string } | null; triggerContext: { __typename: string } }
interface RoutineRow { id: string; name: string; status: string; schedule: { expression: string; timezone: string; lastRunAt: string | null } | null; runs: RunRow[] }
const ROUTINES = doc`query Routines { routines(first: 100) { edges { node { id name status schedule { expression timezone lastRunAt } } } } }`;
const RUN_FIELDS = 'id createdAt sessionId error { type message } triggerContext { __typename }';
/** One request for every routine's latest runs (aliases), not one per routine. */
const runsQuery = (ids: string[]) => `query Runs(${ids.map((_, i) => `$r${i}: String!`).join(', ')}) { ${ids.map((_, i) => `r${i}: routineRuns(routineId: $r${i}, first: 3) { edges { node { ${RUN_FIELDS} } } }`).join(' ')} }`;
doc`${runsQuery(['sample'])}`;
export function RoutinesPage() {
  const load = async () => {
    const d = await gql<{ routines: { edges: { node: Omit<RoutineRow, 'runs'> }[] } }>(ROUTINES);
    const rows = d.routines.edges.map((e) => e.node);
    if (!rows.length) return [];
    const runs = await gql<Record<string, { edges: { node: RunRow }[] }>>(runsQuery(rows.map((r) => r.id)), Object.fromEntries(rows.map((r, i) => [`r${i}`, r.id])));
    return rows.map((r, i) => ({ ...r, runs: runs[`r${i}`]?.edges.map((e) => e.node) ?? [] }));
  };
  return (
    <ListPage<RoutineRow> title="Routines" what="routines" empty="No routines yet." load={load}
      intro={<>Scheduled (cron) or manual sessions, with their latest runs.</>}
      render={(rows) => (
        <table>
          <thead><tr><th scope="col">Routine</th><th scope="col">Status</th><th scope="col">Schedule</th><th scope="col">Latest runs</th></tr></thead>
          <tbody>{rows.map((r) => (
            <tr key={r.id}>
              <td>{r.name}<br /><small className="muted"><code>{r.id}</code></small></td>
              <td><Badge tone={r.status === 'active' ? 'good' : 'warn'}>{r.status}</Badge></td>
              <td>{r.schedule ? <><code>{r.schedule.expression}</code> ({r.schedule.timezone})<br /><small className="muted">last run {when(r.schedule.lastRunAt)}</small></> : 'manual only'}</td>
              <td>{r.runs.length ? <ul className="plain">{r.runs.map((x) => (
                <li key={x.id}>{when(x.createdAt)} · {x.triggerContext.__typename === 'ManualTrigger' ? 'manual' : 'scheduled'} · {x.error ? <span className="error-text">{x.error.type}: {x.error.message}</span> : x.sessionId ? <a href={href('sessions', x.sessionId)}>session</a> : 'ok'}</li>
              ))}</ul> : 'none'}</td>
            </tr>
          ))}</tbody>
        </table>
      )} />
  );
}

interface Delivery { id: string; eventType: string; status: string; attempts: number; lastStatusCode: number | null; createdAt: string }
interface EndpointRow { id: string; url: string; status: string; events: string[]; failureCount: number; deliveries: { edges: { node: Delivery }[] } }
const WEBHOOKS = doc`query Webhooks { webhookEndpoints { id url status events failureCount deliveries(first: 5) { edges { node { id eventType status attempts lastStatusCode createdAt } } } } }`;
export function WebhooksPage() {
  return (
    <ListPage<EndpointRow> title="Webhooks" what="webhook endpoints" empty="No webhook endpoints."
      intro={<>Outbound webhook endpoints (signed <code>v1=</code> HMAC) and their latest deliveries.</>}
      load={() => gql<{ webhookEndpoints: EndpointRow[] }>(WEBHOOKS).then((d) => d.webhookEndpoints)}
      render={(rows) => (
        <table>
          <thead><tr><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Events</th><th scope="col">Latest deliveries</th></tr></thead>
          <tbody>{rows.map((w) => (
            <tr key={w.id}>
              <td><code>{w.url}</code><br /><small className="muted"><code>{w.id}</code></small></td>
              <td><Badge tone={w.status === 'active' ? 'good' : 'warn'}>{w.status}</Badge>{w.failureCount ? <> · {w.failureCount} failures</> : null}</td>
              <td>{w.events.join(', ')}</td>
              <td>{w.deliveries.edges.length ? <ul className="plain">{w.deliveries.edges.map(({ node: d }) => (
                <li key={d.id}>{when(d.createdAt)} · {d.eventType} · {d.status}{d.lastStatusCode ? ` (${d.lastStatusCode})` : ''} · {d.attempts} attempt{d.attempts === 1 ? '' : 's'}</li>
              ))}</ul> : 'none'}</td>
            </tr>
          ))}</tbody>
        </table>
      )} />
  );
}

interface SubscriptionRow { provider: string; status: string; label: string | null; createdAt: string; lastUsedAt: string | null; useForNewAgents: boolean }
const SUBSCRIPTIONS = doc`query Subscriptions { modelSubscriptions { provider status label createdAt lastUsedAt useForNewAgents } }`;
export function SubscriptionsPage() {
  return (
    <ListPage<SubscriptionRow> title="Model subscriptions" what="model subscriptions" empty="No connected subscriptions: platform keys are used."
      intro={<>Your own provider credentials (account billing) instead of the platform's keys.</>}
      load={() => gql<{ modelSubscriptions: SubscriptionRow[] }>(SUBSCRIPTIONS).then((d) => d.modelSubscriptions)}
      render={(rows) => (
        <table>
          <thead><tr><th scope="col">Provider</th><th scope="col">Status</th><th scope="col">Label</th><th scope="col">For new agents</th><th scope="col">Last used</th></tr></thead>
          <tbody>{rows.map((m) => <tr key={m.provider}><td>{m.provider}</td><td><Badge tone={m.status === 'connected' ? 'good' : 'bad'}>{m.status}</Badge></td><td>{m.label ?? ''}</td><td>{m.useForNewAgents ? 'yes' : 'no'}</td><td>{when(m.lastUsedAt)}</td></tr>)}</tbody>
        </table>
      )} />
  );
}
