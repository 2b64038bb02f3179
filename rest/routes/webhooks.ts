// /webhooks: outbound webhook endpoints (admin scope for writes).
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { Ok, Timestamp } from '../schemas.js';
import { createEndpointBody, patchEndpointBody } from '../../src/webhooks/endpoints.js';

const FIELDS = 'id url events status failureCount createdAt';
const Endpoint = z.object({
  id: z.string(), url: z.string(), events: z.array(z.string()), status: z.enum(['active', 'disabled']), failure_count: z.int(), created_at: Timestamp,
}).meta({ id: 'WebhookEndpoint' });
const toRest = (e: any) => ({ id: e.id, url: e.url, events: e.events, status: e.status, failure_count: e.failureCount, created_at: e.createdAt });
const idParam = ({ params }: { params: Record<string, string> }) => ({ id: params.id });

export const webhookRoutes = [
  defineRoute({
    method: 'GET', path: '/webhooks', operationId: 'listWebhookEndpoints', tag: 'Webhooks', scope: 'read',
    summary: 'Outbound webhook endpoints',
    document: `query Endpoints { webhookEndpoints { ${FIELDS} } }`,
    result: (d) => ({ data: d.webhookEndpoints.map(toRest) }),
    response: z.object({ data: z.array(Endpoint) }),
  }),
  defineRoute({
    method: 'POST', path: '/webhooks', operationId: 'createWebhookEndpoint', tag: 'Webhooks', scope: 'admin',
    summary: 'Register an endpoint; the whsec_ secret is in this response only',
    note: 'https, or http for localhost only; private and link-local addresses are refused. Events: session.status_running, session.status_idle, session.error, session.status_terminated, session.deleted, routine_run.succeeded, routine_run.failed, routine.paused, agent.created, agent.updated, agent.archived, agent.deleted.',
    body: createEndpointBody,
    document: `mutation Create($input: JSONObject!) { createWebhookEndpoint(input: $input) { secret endpoint { ${FIELDS} } } }`,
    variables: ({ body }) => ({ input: body }),
    result: (d) => ({ ...toRest(d.createWebhookEndpoint.endpoint), secret: d.createWebhookEndpoint.secret }),
    status: 201,
    idempotent: true,
    response: Endpoint.extend({ secret: z.string() }).meta({ id: 'CreatedWebhookEndpoint' }),
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'GET', path: '/webhooks/{id}', operationId: 'getWebhookEndpoint', tag: 'Webhooks', scope: 'read',
    summary: 'One endpoint',
    document: `query Endpoint($id: String!) { webhookEndpoint(id: $id) { ${FIELDS} } }`,
    variables: idParam,
    result: (d) => toRest(d.webhookEndpoint),
    response: Endpoint,
  }),
  defineRoute({
    method: 'PATCH', path: '/webhooks/{id}', operationId: 'updateWebhookEndpoint', tag: 'Webhooks', scope: 'admin',
    summary: 'Change url or events, or re-enable (status active keeps the secret)',
    body: patchEndpointBody,
    document: `mutation Update($id: String!, $input: JSONObject!) { updateWebhookEndpoint(id: $id, input: $input) { ${FIELDS} } }`,
    variables: ({ params, body }) => ({ id: params.id, input: body }),
    result: (d) => toRest(d.updateWebhookEndpoint),
    response: Endpoint,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'DELETE', path: '/webhooks/{id}', operationId: 'deleteWebhookEndpoint', tag: 'Webhooks', scope: 'admin',
    summary: 'Remove the endpoint',
    document: `mutation Delete($id: String!) { deleteWebhookEndpoint(id: $id) }`,
    variables: idParam,
    result: () => ({ ok: true }),
    response: Ok,
  }),
];
