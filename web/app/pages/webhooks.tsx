// Outbound webhook endpoints: create (the signing secret is shown once), edit url/events,
// disable or re-enable, delete; each endpoint's deliveries with their attempts and answers.
import { useState } from 'react';
import { doc, gql } from '../../shared/graphql.js';
import { useAsync } from '../lib/use-async.js';
import { when } from '../lib/format.js';
import { Badge, ErrorNote, Loading } from '../ui.js';
import { ResourcePage, list, text, type FieldSpec } from '../resource.js';
import { Table } from '../table.js';

interface Endpoint {
  id: string;
  url: string;
  status: 'active' | 'disabled';
  events: string[];
  failureCount: number;
  createdAt: string;
}
interface Delivery {
  id: string;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  nextAttemptAt: string | null;
}

const FIELDS = 'id url status events failureCount createdAt';
const LIST = doc`query Webhooks { webhookEndpoints { ${FIELDS} } webhookEventTypes }`;
const CREATE = doc`mutation CreateWebhook($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { id secret } }`;
const UPDATE = doc`mutation UpdateWebhook($id: String!, $input: UpdateWebhookEndpointInput!) { updateWebhookEndpoint(id: $id, input: $input) { id } }`;
const DELETE = doc`mutation DeleteWebhook($id: String!) { deleteWebhookEndpoint(id: $id) }`;
const DELIVERIES = doc`query Deliveries($id: String!) { webhookEndpoint(id: $id) { deliveries(first: 25) { edges { node { id eventType status attempts lastStatusCode lastError createdAt nextAttemptAt } } } } }`;

function Deliveries({ endpoint }: { endpoint: Endpoint }) {
  const rows = useAsync(
    () =>
      gql<{ webhookEndpoint: { deliveries: { edges: { node: Delivery }[] } } }>(DELIVERIES, { id: endpoint.id }).then((d) =>
        d.webhookEndpoint.deliveries.edges.map((e) => e.node),
      ),
    [endpoint],
  );
  if (!rows.data) return rows.error ? <ErrorNote error={rows.error} /> : <Loading what="deliveries" />;
  if (!rows.data.length) return <p className="muted">No deliveries yet.</p>;
  return (
    <Table
      rows={rows.data}
      rowKey={(d) => d.id}
      caption={`Deliveries to ${endpoint.url}`}
      columns={[
        { label: 'When', cell: (d) => when(d.createdAt) },
        { label: 'Event', cell: (d) => d.eventType },
        { label: 'Status', cell: (d) => <Badge tone={d.status === 'succeeded' ? 'good' : d.status === 'failed' ? 'bad' : 'warn'}>{d.status}</Badge> },
        { label: 'Attempts', num: true, cell: (d) => d.attempts },
        { label: 'Answer', cell: (d) => (d.lastStatusCode ? `HTTP ${d.lastStatusCode}` : (d.lastError ?? '—')) },
        { label: 'Next attempt', cell: (d) => when(d.nextAttemptAt) },
      ]}
    />
  );
}

export function WebhooksPage() {
  // Loaded with the list (one request): the form's event choices.
  const [eventTypes, setEventTypes] = useState<string[]>([]);
  const fields = (withStatus: boolean): FieldSpec[] => [
    {
      name: 'url',
      label: 'URL',
      kind: 'url',
      required: true,
      placeholder: 'https://example.com/hooks',
      hint: 'https, or http for localhost (allowed only when OUTBOUND_ALLOW permits it).',
    },
    { name: 'events', label: 'Events', kind: 'checks', options: eventTypes.map((t) => [t, t] as const) },
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
    <ResourcePage<Endpoint>
      title="Webhooks"
      noun="webhook endpoint"
      rowKey={(w) => w.id}
      rowName={(w) => w.url}
      intro={
        <>
          The service posts events to these URLs, signed with the endpoint's secret (<code>v1=</code> HMAC); failed deliveries are retried.
        </>
      }
      empty="No webhook endpoints."
      load={async () => {
        const d = await gql<{ webhookEndpoints: Endpoint[]; webhookEventTypes: string[] }>(LIST);
        setEventTypes(d.webhookEventTypes);
        return d.webhookEndpoints;
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
        {
          label: 'Status',
          cell: (w) => (
            <>
              <Badge tone={w.status === 'active' ? 'good' : 'warn'}>{w.status}</Badge>
              {w.failureCount ? <> · {w.failureCount} failures</> : null}
            </>
          ),
        },
        { label: 'Created', cell: (w) => when(w.createdAt) },
      ]}
      create={{
        fields: fields(false),
        submit: async (v) => {
          const d = await gql<{ createWebhookEndpoint: { id: string; secret: string } }>(CREATE, { input: { url: text(v.url), events: list(v.events) } });
          return { secret: { label: 'Signing secret', value: d.createWebhookEndpoint.secret } };
        },
      }}
      edit={{
        fields: () => fields(true),
        initial: (w) => ({ url: w.url, events: w.events, status: w.status }),
        submit: (w, v) => gql(UPDATE, { id: w.id, input: { url: text(v.url), events: list(v.events), status: text(v.status) } }),
      }}
      detail={{ label: 'Deliveries', render: (w) => <Deliveries endpoint={w} /> }}
      remove={{ run: (w) => gql(DELETE, { id: w.id }) }}
    />
  );
}
