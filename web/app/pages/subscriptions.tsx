// Model subscriptions: the universe's own provider credentials (account billing) instead of the
// platform's keys. Connect (the credential is write-only), relabel, use for new sessions,
// disconnect.
import { doc, gql } from '../../shared/graphql.js';
import { when } from '../lib/format.js';
import { Badge } from '../ui.js';
import { ResourcePage, optional, text } from '../resource.js';

interface Subscription {
  provider: string;
  status: string;
  label: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  useForNewAgents: boolean;
}
const LIST = doc`query Subscriptions { modelSubscriptions { provider status label createdAt lastUsedAt useForNewAgents } }`;
const PUT = doc`mutation PutSubscription($provider: String!, $input: PutModelSubscriptionInput!) { putModelSubscription(provider: $provider, input: $input) { provider } }`;
const UPDATE = doc`mutation UpdateSubscription($provider: String!, $input: UpdateModelSubscriptionInput!) { updateModelSubscription(provider: $provider, input: $input) { provider } }`;
const DELETE = doc`mutation DeleteSubscription($provider: String!) { deleteModelSubscription(provider: $provider) }`;

export function SubscriptionsPage() {
  return (
    <ResourcePage<Subscription>
      title="Model subscriptions"
      noun="subscription"
      rowKey={(m) => m.provider}
      rowName={(m) => (m.label ? `${m.provider} (${m.label})` : m.provider)}
      intro={<>Your own provider credentials: sessions on account billing use them instead of the platform's keys and are not charged to the wallet.</>}
      empty="No connected subscriptions: the platform's keys are used."
      load={() => gql<{ modelSubscriptions: Subscription[] }>(LIST).then((d) => d.modelSubscriptions)}
      columns={[
        { label: 'Provider', cell: (m) => m.provider },
        { label: 'Label', cell: (m) => m.label ?? '' },
        { label: 'Status', cell: (m) => <Badge tone={m.status === 'connected' ? 'good' : 'bad'}>{m.status.replace('_', ' ')}</Badge> },
        { label: 'For new sessions', cell: (m) => (m.useForNewAgents ? 'yes' : 'no') },
        { label: 'Last used', cell: (m) => when(m.lastUsedAt) },
      ]}
      create={{
        submitLabel: 'Connect',
        initial: { provider: 'anthropic' },
        fields: [
          {
            name: 'provider',
            label: 'Provider',
            kind: 'select',
            options: [
              ['anthropic', 'Anthropic'],
              ['openai', 'OpenAI'],
            ],
          },
          {
            name: 'credential',
            label: 'API key',
            kind: 'password',
            required: true,
            hint: 'Write-only: stored encrypted, never shown again. Connecting a provider again replaces its key.',
          },
          { name: 'label', label: 'Label', maxLength: 60 },
        ],
        submit: async (v) =>
          void (await gql(PUT, {
            provider: text(v.provider),
            input: { credential: typeof v.credential === 'string' ? v.credential : '', label: optional(v.label) },
          })),
      }}
      edit={{
        fields: [
          { name: 'label', label: 'Label', maxLength: 60 },
          { name: 'useForNewAgents', label: "New sessions on this provider's models bill to this subscription", kind: 'checkbox' },
        ],
        initial: (m) => ({ label: m.label ?? '', useForNewAgents: m.useForNewAgents }),
        submit: (m, v) => gql(UPDATE, { provider: m.provider, input: { label: optional(v.label), useForNewAgents: v.useForNewAgents === true } }),
      }}
      remove={{ label: 'Disconnect', run: (m) => gql(DELETE, { provider: m.provider }) }}
    />
  );
}
