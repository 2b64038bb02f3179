// Channels: messaging platforms wired to sessions. Four tabs: apps (your own platform
// credentials, write-only), connections (a conversation on a platform, claimed by the end user
// through its connect link), bindings (which session or channel webhook a thread routes to) and
// channel webhooks (endpoints that receive channel events; the secret is shown once).
import { useState } from 'react';
import { doc, gql } from '../../shared/graphql.js';
import { href } from '../lib/router.js';
import { when } from '../lib/format.js';
import { Badge } from '../ui.js';
import { ResourcePage, list, optional, text, type FieldSpec, type Values } from '../resource.js';

interface App {
  id: string;
  platform: string;
  label: string;
  status: string;
  credentialKeys: string[];
  createdAt: string;
  setup: Record<string, unknown>;
}
interface Connection {
  id: string;
  platform: string;
  label: string;
  status: 'PENDING' | 'CONNECTED' | 'DISCONNECTED';
  createdAt: string;
  connect: { url: string; code: string | null; phone: string | null; expiresAt: string } | null;
  boundSession: { id: string; label: string } | null;
}
interface Binding {
  id: string;
  connectionId: string;
  threadId: string | null;
  isDefault: boolean;
  routeKey: string;
  status: string;
  destination: { session: string | null; webhook: string | null };
}

const APPS = doc`query ChannelApps { channelApps { id platform label status credentialKeys createdAt setup } }`;
const CREATE_APP = doc`mutation CreateChannelApp($input: CreateChannelAppInput!) { createChannelApp(input: $input) { id } }`;
const UPDATE_APP = doc`mutation UpdateChannelApp($id: String!, $input: UpdateChannelAppInput!) { updateChannelApp(id: $id, input: $input) { id } }`;
const DELETE_APP = doc`mutation DeleteChannelApp($id: String!) { deleteChannelApp(id: $id) }`;
const CONNECTIONS = doc`query ChannelConnections { channelConnections { id platform label status createdAt connect { url code phone expiresAt } boundSession { id label } } }`;
const CREATE_CONNECTION = doc`mutation CreateChannelConnection($input: CreateChannelConnectionInput!) { createChannelConnection(input: $input) { id } }`;
const DELETE_CONNECTION = doc`mutation DeleteChannelConnection($id: String!) { deleteChannelConnection(id: $id) }`;
const BINDINGS = doc`query ChannelBindings { channelBindings { id connectionId threadId isDefault routeKey status destination { session webhook } } channelConnections { id label platform } }`;
const CREATE_BINDING = doc`mutation CreateChannelBinding($input: CreateChannelBindingInput!) { createChannelBinding(input: $input) { id } }`;
const SET_DEFAULT = doc`mutation SetConnectionBinding($id: String!, $input: SetChannelConnectionBindingInput!) { setChannelConnectionBinding(id: $id, input: $input) { id } }`;
const DELETE_BINDING = doc`mutation DeleteChannelBinding($id: String!) { deleteChannelBinding(id: $id) }`;
const CLEAR_DEFAULT = doc`mutation ClearConnectionBinding($id: String!) { clearChannelConnectionBinding(id: $id) }`;

interface ChannelWebhook {
  id: string;
  url: string;
  status: string;
  events: string[];
}
const WEBHOOKS = doc`query ChannelWebhooks { channelWebhooks { id url status events } channelEventTypes }`;
const CREATE_WEBHOOK = doc`mutation CreateChannelWebhook($input: CreateChannelWebhookInput!) { createChannelWebhook(input: $input) { id secret } }`;
const UPDATE_WEBHOOK = doc`mutation UpdateChannelWebhook($id: String!, $input: UpdateChannelWebhookInput!) { updateChannelWebhook(id: $id, input: $input) { id } }`;
const DELETE_WEBHOOK = doc`mutation DeleteChannelWebhook($id: String!) { deleteChannelWebhook(id: $id) }`;

const APP_PLATFORMS = [
  ['slack', 'Slack'],
  ['discord', 'Discord'],
  ['telegram', 'Telegram'],
  ['whatsapp', 'WhatsApp'],
] as const;
const PLATFORMS = [['loopback', 'Loopback (in-process, for trying it out)'], ...APP_PLATFORMS] as const;

/** `KEY=value` lines to the credentials map (values never come back). */
function credentials(v: Values): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of (typeof v.credentials === 'string' ? v.credentials : '').split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

function destination(v: Values) {
  const session = optional(v.session);
  return session ? { session } : { webhook: text(v.webhook) };
}

const TABS = [
  ['connections', 'Connections'],
  ['bindings', 'Bindings'],
  ['webhooks', 'Webhooks'],
  ['apps', 'Apps'],
] as const;
function Tabs({ tab }: { tab: string }) {
  return (
    <nav className="tabs" aria-label="Channels">
      {TABS.map(([key, label]) => (
        <a key={key} href={href('channels', key)} aria-current={tab === key ? 'page' : undefined}>
          {label}
        </a>
      ))}
    </nav>
  );
}

function AppsTab() {
  return (
    <ResourcePage<App>
      title="Channel apps"
      noun="app"
      nav={<Tabs tab="apps" />}
      rowKey={(a) => a.id}
      rowName={(a) => a.label}
      intro={<>Your own platform app (bring your own credentials): the service registers its webhook with the platform. Credential values are write-only.</>}
      empty="No channel apps. Loopback connections need none."
      load={() => gql<{ channelApps: App[] }>(APPS).then((d) => d.channelApps)}
      columns={[
        {
          label: 'App',
          cell: (a) => (
            <>
              {a.label}
              <br />
              <small className="muted">
                <code>{a.id}</code>
              </small>
            </>
          ),
        },
        { label: 'Platform', cell: (a) => a.platform },
        { label: 'Credentials', cell: (a) => a.credentialKeys.join(', ') },
        { label: 'Status', cell: (a) => <Badge tone={a.status === 'active' ? 'good' : 'bad'}>{a.status}</Badge> },
        {
          label: 'Setup',
          cell: (a) => (
            <ul className="plain">
              {Object.entries(a.setup).map(([k, v]) => (
                <li key={k}>
                  {k}: <code>{String(v)}</code>
                </li>
              ))}
            </ul>
          ),
        },
      ]}
      create={{
        initial: { platform: 'slack' },
        fields: [
          { name: 'platform', label: 'Platform', kind: 'select', options: APP_PLATFORMS },
          { name: 'label', label: 'Label', required: true, maxLength: 120 },
          {
            name: 'credentials',
            label: 'Credentials',
            kind: 'textarea',
            required: true,
            rows: 3,
            placeholder: 'bot_token=…',
            hint: 'One NAME=value a line, as the platform needs (e.g. bot_token, signing_secret).',
          },
        ],
        submit: async (v) => void (await gql(CREATE_APP, { input: { platform: text(v.platform), label: text(v.label), credentials: credentials(v) } })),
      }}
      edit={{
        fields: [
          { name: 'label', label: 'Label', required: true, maxLength: 120 },
          {
            name: 'credentials',
            label: 'Replace credentials',
            kind: 'textarea',
            rows: 3,
            hint: 'Empty keeps them; otherwise the whole set, one NAME=value a line (registers again).',
          },
        ],
        initial: (a) => ({ label: a.label }),
        submit: (a, v) => {
          const bag = credentials(v);
          return gql(UPDATE_APP, { id: a.id, input: { label: text(v.label), ...(Object.keys(bag).length ? { credentials: bag } : {}) } });
        },
      }}
      remove={{ run: (a) => gql(DELETE_APP, { id: a.id }) }}
    />
  );
}

function ConnectionsTab() {
  return (
    <ResourcePage<Connection>
      title="Channel connections"
      noun="connection"
      nav={<Tabs tab="connections" />}
      rowKey={(c) => c.id}
      rowName={(c) => c.label}
      intro={<>A conversation on a platform. A new connection is pending until the end user opens its connect link (or sends its code) and claims it.</>}
      empty="No connections yet."
      load={() => gql<{ channelConnections: Connection[] }>(CONNECTIONS).then((d) => d.channelConnections)}
      columns={[
        {
          label: 'Connection',
          cell: (c) => (
            <>
              {c.label}
              <br />
              <small className="muted">
                <code>{c.id}</code>
              </small>
            </>
          ),
        },
        { label: 'Platform', cell: (c) => c.platform },
        {
          label: 'Status',
          cell: (c) => <Badge tone={c.status === 'CONNECTED' ? 'good' : c.status === 'PENDING' ? 'warn' : 'bad'}>{c.status.toLowerCase()}</Badge>,
        },
        {
          label: 'Connect',
          cell: (c) =>
            c.connect ? (
              <>
                <a href={c.connect.url} target="_blank" rel="noopener">
                  Open the connect link
                </a>
                {c.connect.code ? (
                  <>
                    {' '}
                    · send <code>{c.connect.code}</code>
                    {c.connect.phone ? <> to {c.connect.phone}</> : null}
                  </>
                ) : null}
                <br />
                <small className="muted">expires {when(c.connect.expiresAt)}</small>
              </>
            ) : (
              '—'
            ),
        },
        { label: 'Session', cell: (c) => (c.boundSession ? <a href={href('sessions', c.boundSession.id)}>{c.boundSession.label}</a> : '—') },
      ]}
      create={{
        initial: { platform: 'loopback' },
        fields: [
          { name: 'platform', label: 'Platform', kind: 'select', options: PLATFORMS },
          { name: 'label', label: 'Label', maxLength: 120 },
          {
            name: 'session',
            label: 'Route to session (optional)',
            placeholder: 'sess_…',
            hint: 'Pre-binds the connection: its messages become turns of this session.',
          },
          {
            name: 'callbackUrl',
            label: 'Callback URL (optional)',
            kind: 'url',
            hint: 'Link flows: where the connect page sends the end user after the claim.',
          },
        ],
        submit: async (v) => {
          const session = optional(v.session);
          await gql(CREATE_CONNECTION, {
            input: {
              platform: text(v.platform),
              label: optional(v.label),
              callbackUrl: optional(v.callbackUrl),
              ...(session ? { destination: { session } } : {}),
            },
          });
        },
      }}
      remove={{ run: (c) => gql(DELETE_CONNECTION, { id: c.id }) }}
    />
  );
}

function BindingsTab() {
  // Loaded with the list (one request): the form's connection choices and the list's names.
  const [connectionNames, setConnectionNames] = useState<ReadonlyMap<string, string>>(new Map());
  return (
    <ResourcePage<Binding>
      title="Channel bindings"
      noun="binding"
      nav={<Tabs tab="bindings" />}
      rowKey={(b) => b.id}
      rowName={(b) => (b.isDefault ? `${connectionNames.get(b.connectionId) ?? b.connectionId} (every thread)` : `thread ${b.threadId}`)}
      intro={<>Where a connection's messages go: a binding for one thread, or the connection-level binding every other thread follows.</>}
      empty="No bindings yet."
      load={async () => {
        const d = await gql<{ channelBindings: Binding[]; channelConnections: { id: string; label: string }[] }>(BINDINGS);
        setConnectionNames(new Map(d.channelConnections.map((c) => [c.id, c.label])));
        return d.channelBindings;
      }}
      columns={[
        { label: 'Connection', cell: (b) => connectionNames.get(b.connectionId) ?? <code>{b.connectionId}</code> },
        { label: 'Thread', cell: (b) => (b.isDefault ? 'every thread' : <code>{b.threadId}</code>) },
        {
          label: 'Destination',
          cell: (b) =>
            b.destination.session ? (
              <a href={href('sessions', b.destination.session)}>
                <code>{b.destination.session}</code>
              </a>
            ) : (
              <>
                webhook <code>{b.destination.webhook}</code>
              </>
            ),
        },
        { label: 'Route key', cell: (b) => b.routeKey },
        { label: 'Status', cell: (b) => b.status },
      ]}
      create={{
        fields: [
          {
            name: 'connection',
            label: 'Connection',
            kind: 'select',
            required: true,
            options: [['', 'Choose a connection'], ...[...connectionNames].map(([id, label]) => [id, label] as const)],
          },
          { name: 'thread', label: 'Thread id', hint: 'Empty: the connection-level binding (every thread without its own).' },
          { name: 'session', label: 'Session id', placeholder: 'sess_…' },
          { name: 'webhook', label: 'or channel webhook id', hint: 'Messages arrive at that endpoint as message.received.' },
        ],
        submit: async (v) => {
          const thread = optional(v.thread);
          if (thread) await gql(CREATE_BINDING, { input: { connectionId: text(v.connection), threadId: thread, destination: destination(v) } });
          else await gql(SET_DEFAULT, { id: text(v.connection), input: { destination: destination(v) } });
        },
      }}
      remove={{ run: (b) => (b.isDefault ? gql(CLEAR_DEFAULT, { id: b.connectionId }) : gql(DELETE_BINDING, { id: b.id })) }}
    />
  );
}

function WebhooksTab() {
  // Loaded with the list (one request): the form's event choices.
  const [channelEvents, setChannelEvents] = useState<string[]>([]);
  const fields = (withStatus: boolean): FieldSpec[] => [
    { name: 'url', label: 'URL', kind: 'url', required: true, placeholder: 'https://example.com/channel-events' },
    { name: 'events', label: 'Events', kind: 'checks', options: channelEvents.map((e) => [e, e] as const), hint: 'None chosen: every event.' },
    ...(withStatus
      ? [
          {
            name: 'status',
            label: 'Status',
            kind: 'select' as const,
            options: [
              ['active', 'active'],
              ['disabled', 'disabled'],
            ] as const,
          },
        ]
      : []),
  ];
  return (
    <ResourcePage<ChannelWebhook>
      title="Channel webhooks"
      noun="channel webhook"
      nav={<Tabs tab="webhooks" />}
      rowKey={(w) => w.id}
      rowName={(w) => w.url}
      intro={<>Endpoints that receive channel events (message.received when a binding routes to them, channel.connected …), signed with their secret.</>}
      empty="No channel webhooks."
      load={async () => {
        const d = await gql<{ channelWebhooks: ChannelWebhook[]; channelEventTypes: string[] }>(WEBHOOKS);
        // The catalog names events as the wire does (message.received); the GraphQL enum as message_received.
        setChannelEvents(d.channelEventTypes.map((e) => e.replace(/\./g, '_')));
        return d.channelWebhooks;
      }}
      columns={[
        {
          label: 'Endpoint',
          cell: (w) => (
            <>
              <code>{w.url}</code>
              <br />
              <small className="muted">
                <code>{w.id}</code>
              </small>
            </>
          ),
        },
        { label: 'Events', cell: (w) => w.events.join(', ') },
        { label: 'Status', cell: (w) => <Badge tone={w.status === 'active' ? 'good' : 'warn'}>{w.status}</Badge> },
      ]}
      create={{
        fields: fields(false),
        submit: async (v) => {
          const events = list(v.events);
          const d = await gql<{ createChannelWebhook: { secret: string } }>(CREATE_WEBHOOK, {
            input: { url: text(v.url), ...(events.length ? { events } : {}) },
          });
          return { secret: { label: 'Signing secret', value: d.createChannelWebhook.secret } };
        },
      }}
      edit={{
        fields: () => fields(true),
        initial: (w) => ({ url: w.url, events: w.events, status: w.status }),
        submit: (w, v) => {
          const events = list(v.events);
          return gql(UPDATE_WEBHOOK, { id: w.id, input: { url: text(v.url), status: text(v.status), ...(events.length ? { events } : {}) } });
        },
      }}
      remove={{ run: (w) => gql(DELETE_WEBHOOK, { id: w.id }) }}
    />
  );
}

export function ChannelsPage({ tab }: { tab: string }) {
  if (tab === 'apps') return <AppsTab />;
  if (tab === 'webhooks') return <WebhooksTab />;
  if (tab === 'bindings') return <BindingsTab />;
  return <ConnectionsTab />;
}
