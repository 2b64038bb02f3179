// /sessions: CRUD, events (send, history, live stream), interrupt, the deprecated send.
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { createSessionBody, patchSessionBody } from '../../src/sessions/rules.js';
import { sendEventsBody, legacySendBody } from '../../src/sessions/content.js';
import { fileResourceInput, rotateTokenBody } from '../../src/resources/rules.js';
import { Ok, Timestamp } from '../schemas.js';

const SESSION_FIELDS = `id agentId title status agentType llm reasoningEffort modelBilling default metadata
  budget { maxListCost { amount currency } consumedCost { amount currency } reached reachedAt } resources createdAt`;

const Money = z.object({ amount: z.string(), currency: z.literal('USD') });
export const SessionBody = z.object({
  id: z.string(),
  agentId: z.string().nullable(),
  title: z.string().nullable(),
  status: z.enum(['provisioning', 'idle', 'running', 'terminated']),
  agentType: z.string(),
  llm: z.string(),
  reasoningEffort: z.string().nullable(),
  modelBilling: z.enum(['platform', 'account']),
  default: z.boolean(),
  metadata: z.record(z.string(), z.unknown()),
  budget: z.object({ max_list_cost: Money, consumed_cost: Money, reached: z.boolean(), reached_at: Timestamp.nullable() }).nullable(),
  resources: z.array(z.record(z.string(), z.unknown())),
  createdAt: Timestamp,
}).meta({ id: 'Session' });

export const EventBody = z.looseObject({
  id: z.string(), type: z.string(), sessionId: z.string(), agentId: z.string().nullable(), at: Timestamp,
}).meta({ id: 'Event' });

/** GraphQL's camelCase budget → the spec's snake_case budget object. */
export function toRestSession(s: any) {
  const { budget, ...rest } = s;
  return {
    ...rest,
    budget: budget ? { max_list_cost: budget.maxListCost, consumed_cost: budget.consumedCost, reached: budget.reached, reached_at: budget.reachedAt } : null,
  };
}

const idParam = ({ params }: { params: Record<string, string> }) => ({ id: params.id });

export const sessionRoutes = [
  defineRoute({
    method: 'GET', path: '/sessions', operationId: 'listSessions', tag: 'Sessions', scope: 'read',
    summary: 'List sessions, optionally of one agent',
    query: z.object({ agent: z.string().optional().describe('agent id filter') }),
    document: `query Sessions($agent: String) { sessions(agent: $agent) { ${SESSION_FIELDS} } }`,
    variables: ({ query }) => ({ agent: query.agent ?? null }),
    result: (d) => ({ sessions: d.sessions.map(toRestSession) }),
    response: z.object({ sessions: z.array(SessionBody) }),
  }),
  defineRoute({
    method: 'POST', path: '/sessions', operationId: 'createSession', tag: 'Sessions', scope: 'write',
    summary: 'Create a session of an agent (provisions its sandbox; initial_events start the first turn)',
    body: createSessionBody,
    document: `mutation CreateSession($input: JSONObject!) { createSession(input: $input) { ${SESSION_FIELDS} } }`,
    variables: ({ body }) => ({ input: body }),
    result: (d) => ({ session: toRestSession(d.createSession) }),
    status: 201,
    idempotent: true,
    response: z.object({ session: SessionBody }),
    errors: ['invalid_request', 'invalid_spec', 'conflict'],
  }),
  defineRoute({
    method: 'GET', path: '/sessions/{id}', operationId: 'getSession', tag: 'Sessions', scope: 'read',
    summary: 'One session (an agent id means its default session)',
    document: `query Session($id: String!) { session(id: $id) { ${SESSION_FIELDS} } }`,
    variables: idParam,
    result: (d) => ({ session: toRestSession(d.session) }),
    response: z.object({ session: SessionBody }),
  }),
  defineRoute({
    method: 'PATCH', path: '/sessions/{id}', operationId: 'updateSession', tag: 'Sessions', scope: 'write',
    summary: 'Change title, metadata, model, reasoning effort, billing or budget of this session only',
    body: patchSessionBody,
    document: `mutation UpdateSession($id: String!, $input: JSONObject!) { updateSession(id: $id, input: $input) { ${SESSION_FIELDS} } }`,
    variables: ({ params, body }) => ({ id: params.id, input: body }),
    result: (d) => ({ session: toRestSession(d.updateSession) }),
    response: z.object({ session: SessionBody }),
    errors: ['invalid_request', 'invalid_spec'],
  }),
  defineRoute({
    method: 'DELETE', path: '/sessions/{id}', operationId: 'deleteSession', tag: 'Sessions', scope: 'write',
    summary: 'Hard delete: the record, its event history and its sandbox',
    document: `mutation DeleteSession($id: String!) { deleteSession(id: $id) }`,
    variables: idParam,
    result: () => ({ ok: true }),
    response: Ok,
    errors: ['session_running'],
  }),
  defineRoute({
    method: 'POST', path: '/sessions/{id}/archive', operationId: 'archiveSession', tag: 'Sessions', scope: 'write',
    summary: 'Archive (terminate) an idle session; idempotent',
    document: `mutation ArchiveSession($id: String!) { archiveSession(id: $id) { ${SESSION_FIELDS} } }`,
    variables: idParam,
    result: (d) => ({ session: toRestSession(d.archiveSession) }),
    response: z.object({ session: SessionBody }),
    errors: ['session_running'],
  }),
  defineRoute({
    method: 'POST', path: '/sessions/{id}/events', operationId: 'sendSessionEvents', tag: 'Events', scope: 'write',
    summary: 'Send events: user.message, system.message, user.interrupt (1 to 50)',
    body: sendEventsBody,
    document: `mutation Send($id: String!, $events: [JSONObject!]!) { sendSessionEvents(sessionId: $id, events: $events) { payload } }`,
    variables: ({ params, body }) => ({ id: params.id, events: body.events }),
    result: (d) => ({ data: d.sendSessionEvents.map((e: any) => e.payload) }),
    status: 202,
    idempotent: true,
    response: z.object({ data: z.array(EventBody) }),
    errors: ['invalid_request', 'session_archived', 'budget_reached', 'insufficient_credits'],
  }),
  defineRoute({
    method: 'GET', path: '/sessions/{id}/events', operationId: 'listSessionEvents', tag: 'Events', scope: 'read',
    summary: 'Event history, oldest first, cursor-paged',
    query: z.object({
      cursor: z.string().max(64).optional().describe('the `cursor` of the previous page'),
      limit: z.coerce.number().int().min(1).max(1000).default(100).describe('1 to 1000, default 100'),
    }),
    document: `query History($id: String!, $cursor: String, $limit: Int) { sessionEventsPage(sessionId: $id, cursor: $cursor, limit: $limit) { events { payload } cursor hasMore } }`,
    variables: ({ params, query }) => ({ id: params.id, cursor: query.cursor ?? null, limit: query.limit }),
    result: (d) => ({ events: d.sessionEventsPage.events.map((e: any) => e.payload), cursor: d.sessionEventsPage.cursor, hasMore: d.sessionEventsPage.hasMore }),
    response: z.object({ events: z.array(EventBody), cursor: z.string().nullable(), hasMore: z.boolean() }).meta({ id: 'EventsPage' }),
  }),
  defineRoute({
    method: 'GET', path: '/sessions/{id}/events/stream', operationId: 'streamSessionEvents', tag: 'Events', scope: 'read',
    summary: 'Live SSE stream of the session (no user.message/system.message); resumes after Last-Event-ID or ?after=',
    query: z.object({ after: z.string().max(64).optional().describe('replay every event after this event id') }),
    document: `subscription Stream($id: String!, $after: String) { sessionEvents(sessionId: $id, after: $after) { payload } }`,
    variables: ({ params, query, headers }) => ({ id: params.id, after: query.after ?? headers['last-event-id'] ?? null }),
    // id and type travel inside the payload: one field to execute per subscriber per event.
    result: (d) => ({ id: d.sessionEvents.payload.id, type: d.sessionEvents.payload.type, payload: d.sessionEvents.payload }),
    stream: true,
    response: EventBody,
  }),
  defineRoute({
    method: 'POST', path: '/sessions/{id}/interrupt', operationId: 'interruptSession', tag: 'Events', scope: 'write',
    summary: 'Interrupt the running turn',
    document: `mutation Interrupt($id: String!) { interruptSession(id: $id) { status } }`,
    variables: idParam,
    result: (d) => ({ status: d.interruptSession.status }),
    response: z.object({ status: z.enum(['interrupting', 'no_turn']) }),
  }),
  defineRoute({
    method: 'POST', path: '/sessions/{id}/messages', operationId: 'sendLegacyMessage', tag: 'Events', scope: 'write',
    summary: 'Deprecated `{parts}` send: translated into one user.message, then answered 410',
    body: legacySendBody,
    document: `mutation Legacy($id: String!, $parts: [JSONObject!]!) { sendLegacySessionMessage(sessionId: $id, parts: $parts) { id } }`,
    variables: ({ params, body }) => ({ id: params.id, parts: body.parts }),
    result: (d) => ({ error: { code: 'gone', message: `this operation is deprecated: use POST /v1/sessions/{id}/events. Your parts were delivered as event ${d.sendLegacySessionMessage.id}` } }),
    status: 410,
    idempotent: true,
    response: z.object({ error: z.object({ code: z.string(), message: z.string() }) }),
  }),
];

// ---- session resources ----
const RES_FIELDS = 'json';
const ResourceBody = z.looseObject({
  id: z.string(), type: z.enum(['file', 'github_repository']), mount_path: z.string(), created_at: Timestamp, updated_at: Timestamp,
  file_id: z.string().optional(), url: z.string().optional(), checkout: z.record(z.string(), z.unknown()).optional(),
}).meta({ id: 'SessionResource' });

export const sessionResourceRoutes = [
  defineRoute({
    method: 'GET', path: '/sessions/{id}/resources', operationId: 'listSessionResources', tag: 'Session resources', scope: 'read',
    summary: 'Resources, oldest first; without limit everything in one answer',
    query: z.object({ limit: z.coerce.number().int().min(1).max(1000).optional(), page: z.string().max(64).optional() }),
    document: `query Resources($id: String!, $limit: Int, $page: String) { sessionResources(sessionId: $id, limit: $limit, page: $page) { data { ${RES_FIELDS} } nextPage } }`,
    variables: ({ params, query }) => ({ id: params.id, limit: query.limit ?? null, page: query.page ?? null }),
    result: (d) => ({ data: d.sessionResources.data.map((r: any) => r.json), next_page: d.sessionResources.nextPage }),
    response: z.object({ data: z.array(ResourceBody), next_page: z.string().nullable() }),
  }),
  defineRoute({
    method: 'POST', path: '/sessions/{id}/resources', operationId: 'addSessionResource', tag: 'Session resources', scope: 'write',
    summary: 'Add a file resource (copied read-only before the next turn); repositories attach only at create',
    body: fileResourceInput,
    document: `mutation Add($id: String!, $input: JSONObject!) { addSessionResource(sessionId: $id, input: $input) { ${RES_FIELDS} } }`,
    variables: ({ params, body }) => ({ id: params.id, input: body }),
    result: (d) => d.addSessionResource.json,
    response: ResourceBody,
    errors: ['invalid_request', 'too_many_resources', 'session_archived'],
  }),
  defineRoute({
    method: 'GET', path: '/sessions/{id}/resources/{rid}', operationId: 'getSessionResource', tag: 'Session resources', scope: 'read',
    summary: 'One resource',
    document: `query Resource($id: String!, $rid: String!) { sessionResource(sessionId: $id, id: $rid) { ${RES_FIELDS} } }`,
    variables: ({ params }) => ({ id: params.id, rid: params.rid }),
    result: (d) => d.sessionResource.json,
    response: ResourceBody,
  }),
  defineRoute({
    method: 'POST', path: '/sessions/{id}/resources/{rid}', operationId: 'rotateSessionResourceToken', tag: 'Session resources', scope: 'write',
    summary: "Rotate a repository resource's token (re-encrypted; never enters the sandbox)",
    body: rotateTokenBody,
    document: `mutation Rotate($id: String!, $rid: String!, $input: JSONObject!) { rotateSessionResourceToken(sessionId: $id, id: $rid, input: $input) { ${RES_FIELDS} } }`,
    variables: ({ params, body }) => ({ id: params.id, rid: params.rid, input: body }),
    result: (d) => d.rotateSessionResourceToken.json,
    response: ResourceBody,
    errors: ['invalid_request', 'egress_header_conflict'],
  }),
  defineRoute({
    method: 'DELETE', path: '/sessions/{id}/resources/{rid}', operationId: 'deleteSessionResource', tag: 'Session resources', scope: 'write',
    summary: 'Remove a file resource and its per-session copy (repositories answer 400)',
    document: `mutation Delete($id: String!, $rid: String!) { deleteSessionResource(sessionId: $id, id: $rid) }`,
    variables: ({ params }) => ({ id: params.id, rid: params.rid }),
    result: (d) => ({ type: 'session_resource_deleted', id: d.deleteSessionResource }),
    response: z.object({ type: z.literal('session_resource_deleted'), id: z.string() }),
    errors: ['invalid_request'],
  }),
];
