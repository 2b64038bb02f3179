// /model-subscriptions: connect a consumer Anthropic / OpenAI subscription (credential
// write-only). Bodies and answers are the zod schemas of src/billing/contract.ts.
import { defineRoute } from '../route.js';
import { Ok } from '../schemas.js';
import { selectionOf } from '../../src/contract/values.js';
import { putSubscriptionBody, patchSubscriptionBody, modelSubscriptionBody, modelSubscriptionList } from '../../src/billing/contract.js';

const SUBSCRIPTION = selectionOf(modelSubscriptionBody);

export const modelSubscriptionRoutes = [
  defineRoute({
    method: 'GET',
    path: '/model-subscriptions',
    operationId: 'listModelSubscriptions',
    tag: 'Model subscriptions',
    scope: 'read',
    summary: 'Connected model subscriptions of the universe',
    document: `query Subs { subscriptions: modelSubscriptions { ${SUBSCRIPTION} } }`,
    response: modelSubscriptionList,
  }),
  defineRoute({
    method: 'PUT',
    path: '/model-subscriptions/{provider}',
    operationId: 'putModelSubscription',
    tag: 'Model subscriptions',
    scope: 'write',
    summary: 'Connect or replace the subscription of a provider (anthropic, openai)',
    body: putSubscriptionBody,
    document: `mutation Put($provider: String!, $input: PutModelSubscriptionInput!) { subscription: putModelSubscription(provider: $provider, input: $input) { ${SUBSCRIPTION} } }`,
    pick: (data) => data.subscription,
    response: modelSubscriptionBody,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'PATCH',
    path: '/model-subscriptions/{provider}',
    operationId: 'updateModelSubscription',
    tag: 'Model subscriptions',
    scope: 'write',
    summary: 'Change label or useForNewAgents',
    body: patchSubscriptionBody,
    document: `mutation Patch($provider: String!, $input: UpdateModelSubscriptionInput!) { subscription: updateModelSubscription(provider: $provider, input: $input) { ${SUBSCRIPTION} } }`,
    pick: (data) => data.subscription,
    response: modelSubscriptionBody,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'DELETE',
    path: '/model-subscriptions/{provider}',
    operationId: 'deleteModelSubscription',
    tag: 'Model subscriptions',
    scope: 'write',
    summary: 'Disconnect the subscription',
    document: `mutation Delete($provider: String!) { ok: deleteModelSubscription(provider: $provider) }`,
    response: Ok,
  }),
];
