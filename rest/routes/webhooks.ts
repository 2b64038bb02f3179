// /webhooks: outbound webhook endpoints (admin scope for writes). Bodies and answers are the zod
// schemas of src/webhooks/contract.ts; documents alias their root field to the answer.
import { defineRoute } from '../route.js';
import { Ok } from '../schemas.js';
import { selectionOf } from '../../src/contract/values.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/webhooks/catalog.js';
import {
  createWebhookEndpointBody,
  patchWebhookEndpointBody,
  webhookEndpointBody,
  createdWebhookEndpointBody,
  webhookEndpointList,
} from '../../src/webhooks/contract.js';

const ENDPOINT = selectionOf(webhookEndpointBody);

export const webhookRoutes = [
  defineRoute({
    method: 'GET',
    path: '/webhooks',
    operationId: 'listWebhookEndpoints',
    tag: 'Webhooks',
    scope: 'read',
    summary: 'Outbound webhook endpoints, oldest first',
    document: `query Endpoints { data: webhookEndpoints { ${ENDPOINT} } }`,
    response: webhookEndpointList,
  }),
  defineRoute({
    method: 'POST',
    path: '/webhooks',
    operationId: 'createWebhookEndpoint',
    tag: 'Webhooks',
    scope: 'admin',
    summary: 'Register an endpoint; the whsec_ secret is in this response only',
    note: `https, or http for localhost only; private and link-local addresses are refused. Events: ${WEBHOOK_EVENT_TYPES.join(', ')}.`,
    body: createWebhookEndpointBody,
    document: `mutation Create($input: CreateWebhookEndpointInput!) { endpoint: createWebhookEndpoint(input: $input) { ${selectionOf(createdWebhookEndpointBody)} } }`,
    pick: (data) => data.endpoint,
    status: 201,
    idempotent: true,
    response: createdWebhookEndpointBody,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'GET',
    path: '/webhooks/{id}',
    operationId: 'getWebhookEndpoint',
    tag: 'Webhooks',
    scope: 'read',
    summary: 'One endpoint',
    document: `query Endpoint($id: String!) { endpoint: webhookEndpoint(id: $id) { ${ENDPOINT} } }`,
    pick: (data) => data.endpoint,
    response: webhookEndpointBody,
  }),
  defineRoute({
    method: 'PATCH',
    path: '/webhooks/{id}',
    operationId: 'updateWebhookEndpoint',
    tag: 'Webhooks',
    scope: 'admin',
    summary: 'Change url or events, or re-enable (status active keeps the secret)',
    body: patchWebhookEndpointBody,
    document: `mutation Update($id: String!, $input: UpdateWebhookEndpointInput!) { endpoint: updateWebhookEndpoint(id: $id, input: $input) { ${ENDPOINT} } }`,
    pick: (data) => data.endpoint,
    response: webhookEndpointBody,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'DELETE',
    path: '/webhooks/{id}',
    operationId: 'deleteWebhookEndpoint',
    tag: 'Webhooks',
    scope: 'admin',
    summary: 'Remove the endpoint',
    document: `mutation Delete($id: String!) { ok: deleteWebhookEndpoint(id: $id) }`,
    response: Ok,
  }),
];
