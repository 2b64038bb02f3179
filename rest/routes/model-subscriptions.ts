// /model-subscriptions: connect a consumer Anthropic / OpenAI subscription (credential write-only).
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { Ok, Timestamp } from '../schemas.js';
import { putSubscriptionBody, patchSubscriptionBody } from '../../src/billing/subscriptions.js';

const FIELDS = 'provider label status expiresAt lastUsedAt useForNewAgents createdAt agents { id agentId name }';
const ModelSubscription = z.object({
  provider: z.enum(['anthropic', 'openai']),
  label: z.string().nullable(),
  status: z.enum(['connected', 'needs_reconnect']),
  expiresAt: Timestamp.nullable(),
  lastUsedAt: Timestamp.nullable(),
  useForNewAgents: z.boolean(),
  createdAt: Timestamp,
  agents: z.array(z.object({ id: z.string(), agentId: z.string().nullable(), name: z.string() })),
}).meta({ id: 'ModelSubscription' });

export const modelSubscriptionRoutes = [
  defineRoute({
    method: 'GET', path: '/model-subscriptions', operationId: 'listModelSubscriptions', tag: 'Model subscriptions', scope: 'read',
    summary: 'Connected model subscriptions of the universe',
    document: `query Subs { modelSubscriptions { ${FIELDS} } }`,
    result: (d) => ({ subscriptions: d.modelSubscriptions }),
    response: z.object({ subscriptions: z.array(ModelSubscription) }),
  }),
  defineRoute({
    method: 'PUT', path: '/model-subscriptions/{provider}', operationId: 'putModelSubscription', tag: 'Model subscriptions', scope: 'write',
    summary: 'Connect or replace the subscription of a provider (anthropic, openai)',
    body: putSubscriptionBody,
    document: `mutation Put($provider: String!, $credential: String!, $label: String) { putModelSubscription(provider: $provider, credential: $credential, label: $label) { ${FIELDS} } }`,
    variables: ({ params, body }) => ({ provider: params.provider, credential: body.credential, label: body.label ?? null }),
    result: (d) => d.putModelSubscription,
    response: ModelSubscription,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'PATCH', path: '/model-subscriptions/{provider}', operationId: 'updateModelSubscription', tag: 'Model subscriptions', scope: 'write',
    summary: 'Change label or useForNewAgents',
    body: patchSubscriptionBody,
    document: `mutation Patch($provider: String!, $input: JSONObject!) { updateModelSubscription(provider: $provider, input: $input) { ${FIELDS} } }`,
    variables: ({ params, body }) => ({ provider: params.provider, input: body }),
    result: (d) => d.updateModelSubscription,
    response: ModelSubscription,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'DELETE', path: '/model-subscriptions/{provider}', operationId: 'deleteModelSubscription', tag: 'Model subscriptions', scope: 'write',
    summary: 'Disconnect the subscription',
    document: `mutation Delete($provider: String!) { deleteModelSubscription(provider: $provider) }`,
    variables: ({ params }) => ({ provider: params.provider }),
    result: () => ({ ok: true }),
    response: Ok,
  }),
];
