// /sessions: CRUD, events (send, history, live stream), interrupt, the deprecated send, and
// session resources. Bodies and answers are the zod schemas of the contract; each document
// aliases its root field to the answer's key and selects the answer's fields (`selectionOf`),
// so the GraphQL result converts to the REST body by the same schema.
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { createSessionBody, patchSessionBody, sessionBody, interruptBody } from '../../src/sessions/contract.js';
import { sendEventsBody, legacySendBody } from '../../src/sessions/content.js';
import { eventsPageBody } from '../../src/sessions/history.js';
import { sessionEventFeed } from '../../src/sessions/feed.js';
import { sessionEvent } from '../../src/events/types.js';
import { fileResourceInput, resourceInput, rotateTokenBody, sessionResource, resourcePage, resourceDeleted } from '../../src/resources/contract.js';
import { selectionOf, toGraphQLInput } from '../../src/contract/values.js';
import { Ok } from '../schemas.js';

const SESSION = selectionOf(sessionBody);
const EVENT = selectionOf(sessionEvent);
const RESOURCE = selectionOf(sessionResource);
const sessionAnswer = z.strictObject({ session: sessionBody });

export const sessionRoutes = [
  defineRoute({
    method: 'GET', path: '/sessions', operationId: 'listSessions', tag: 'Sessions', scope: 'read',
    summary: 'List sessions, optionally of one agent',
    query: z.strictObject({ agent: z.string().max(128).optional().describe('agent id filter') }),
    document: `query Sessions($agent: String) { sessions(agent: $agent) { ${SESSION} } }`,
    variables: ({ query }) => ({ agent: query.agent ?? null }),
    response: z.strictObject({ sessions: z.array(sessionBody) }),
  }),
  defineRoute({
    method: 'POST', path: '/sessions', operationId: 'createSession', tag: 'Sessions', scope: 'write',
    summary: 'Create a session of an agent (provisions its sandbox; initial_events start the first turn)',
    body: createSessionBody,
    document: `mutation CreateSession($input: CreateSessionInput!) { session: createSession(input: $input) { ${SESSION} } }`,
    status: 201,
    idempotent: true,
    response: sessionAnswer,
    errors: ['invalid_request', 'invalid_spec', 'conflict', 'egress_header_conflict', 'insufficient_credits', 'too_many_resources'],
  }),
  defineRoute({
    method: 'GET', path: '/sessions/{id}', operationId: 'getSession', tag: 'Sessions', scope: 'read',
    summary: 'One session (an agent id means its default session)',
    document: `query Session($id: String!) { session(id: $id) { ${SESSION} } }`,
    response: sessionAnswer,
  }),
  defineRoute({
    method: 'PATCH', path: '/sessions/{id}', operationId: 'updateSession', tag: 'Sessions', scope: 'write',
    summary: 'Change title, metadata, model, reasoning effort, billing or budget of this session only',
    body: patchSessionBody,
    document: `mutation UpdateSession($id: String!, $input: UpdateSessionInput!) { session: updateSession(id: $id, input: $input) { ${SESSION} } }`,
    response: sessionAnswer,
    errors: ['invalid_request', 'invalid_spec'],
  }),
  defineRoute({
    method: 'DELETE', path: '/sessions/{id}', operationId: 'deleteSession', tag: 'Sessions', scope: 'write',
    summary: 'Hard delete: the record, its event history and its sandbox',
    document: `mutation DeleteSession($id: String!) { ok: deleteSession(id: $id) }`,
    response: Ok,
    errors: ['session_running'],
  }),
  defineRoute({
    method: 'POST', path: '/sessions/{id}/archive', operationId: 'archiveSession', tag: 'Sessions', scope: 'write',
    summary: 'Archive (terminate) an idle session; idempotent',
    document: `mutation ArchiveSession($id: String!) { session: archiveSession(id: $id) { ${SESSION} } }`,
    response: sessionAnswer,
    errors: ['session_running'],
  }),
  defineRoute({
    method: 'POST', path: '/sessions/{id}/events', operationId: 'sendSessionEvents', tag: 'Events', scope: 'write',
    summary: 'Send events: user.message, system.message, user.interrupt (1 to 50)',
    body: sendEventsBody,
    document: `mutation Send($id: String!, $input: SendSessionEventsInput!) { data: sendSessionEvents(sessionId: $id, input: $input) { ${EVENT} } }`,
    status: 202,
    idempotent: true,
    response: z.strictObject({ data: z.array(sessionEvent) }),
    errors: ['invalid_request', 'session_archived', 'budget_reached', 'insufficient_credits'],
  }),
  defineRoute({
    method: 'GET', path: '/sessions/{id}/events', operationId: 'listSessionEvents', tag: 'Events', scope: 'read',
    summary: 'Event history, oldest first, cursor-paged',
    query: z.strictObject({
      cursor: z.string().max(64).optional().describe('the `cursor` of the previous page'),
      limit: z.coerce.number().int().min(1).max(1000).default(100).describe('1 to 1000, default 100'),
    }),
    document: `query History($id: String!, $cursor: String, $limit: Int) { page: sessionEventsPage(sessionId: $id, cursor: $cursor, limit: $limit) { ${selectionOf(eventsPageBody)} } }`,
    variables: ({ params, query }) => ({ id: params.id, cursor: query.cursor ?? null, limit: query.limit }),
    pick: (data) => data.page,
    response: eventsPageBody,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'GET', path: '/sessions/{id}/events/stream', operationId: 'streamSessionEvents', tag: 'Events', scope: 'read',
    summary: 'Live SSE stream of the session (no user.message/system.message); resumes after Last-Event-ID or ?after=',
    query: z.strictObject({ after: z.string().max(64).optional().describe('replay every event after this event id') }),
    document: '',
    feed: (ctx, { params, query, headers }) => sessionEventFeed(ctx.viewer!, params.id!, query.after ?? headers['last-event-id'] ?? null),
    response: sessionEvent,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'POST', path: '/sessions/{id}/interrupt', operationId: 'interruptSession', tag: 'Events', scope: 'write',
    summary: 'Interrupt the running turn',
    document: `mutation Interrupt($id: String!) { interrupt: interruptSession(id: $id) { status } }`,
    pick: (data) => data.interrupt,
    response: interruptBody,
  }),
  defineRoute({
    method: 'POST', path: '/sessions/{id}/messages', operationId: 'sendLegacyMessage', tag: 'Events', scope: 'write',
    summary: 'Deprecated `{parts}` send: text, image and file parts translated into one user.message (other parts are 400), then answered 410',
    body: legacySendBody,
    document: `mutation Legacy($id: String!, $input: LegacySendInput!) { event: sendLegacySessionMessage(sessionId: $id, input: $input) { ... on UserMessageEvent { id } } }`,
    result: (data) => ({
      error: {
        code: 'gone',
        message: `this operation is deprecated: use POST /v1/sessions/{id}/events. Your parts were delivered as event ${(data.event as { id: string }).id}`,
      },
    }),
    status: 410,
    idempotent: true,
    response: z.strictObject({ error: z.strictObject({ code: z.string(), message: z.string() }) }),
    errors: ['invalid_request', 'session_archived', 'budget_reached', 'insufficient_credits'],
  }),
];

export const sessionResourceRoutes = [
  defineRoute({
    method: 'GET', path: '/sessions/{id}/resources', operationId: 'listSessionResources', tag: 'Session resources', scope: 'read',
    summary: 'Resources, oldest first; without limit everything in one answer',
    query: z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).optional().describe('1 to 1000'), page: z.string().max(64).optional() }),
    document: `query Resources($id: String!, $limit: Int, $page: String) { page: sessionResources(sessionId: $id, limit: $limit, page: $page) { ${selectionOf(resourcePage)} } }`,
    variables: ({ params, query }) => ({ id: params.id, limit: query.limit ?? null, page: query.page ?? null }),
    pick: (data) => data.page,
    response: resourcePage,
    errors: ['invalid_request'],
  }),
  defineRoute({
    method: 'POST', path: '/sessions/{id}/resources', operationId: 'addSessionResource', tag: 'Session resources', scope: 'write',
    summary: 'Add a file resource (copied read-only before the next turn); repositories attach only at create',
    // file resources only (repositories attach at create): the body says so, the mutation takes the union
    body: fileResourceInput,
    variables: ({ params, body }) => ({ id: params.id, input: toGraphQLInput(resourceInput, body) }),
    document: `mutation Add($id: String!, $input: ResourceInput!) { resource: addSessionResource(sessionId: $id, input: $input) { ${RESOURCE} } }`,
    pick: (data) => data.resource,
    idempotent: true,
    response: sessionResource,
    errors: ['invalid_request', 'too_many_resources', 'session_archived'],
  }),
  defineRoute({
    method: 'GET', path: '/sessions/{id}/resources/{rid}', operationId: 'getSessionResource', tag: 'Session resources', scope: 'read',
    summary: 'One resource',
    document: `query Resource($id: String!, $rid: String!) { resource: sessionResource(sessionId: $id, id: $rid) { ${RESOURCE} } }`,
    pick: (data) => data.resource,
    response: sessionResource,
  }),
  defineRoute({
    method: 'POST', path: '/sessions/{id}/resources/{rid}', operationId: 'rotateSessionResourceToken', tag: 'Session resources', scope: 'write',
    summary: "Rotate a repository resource's token (re-encrypted; never enters the sandbox)",
    body: rotateTokenBody,
    document: `mutation Rotate($id: String!, $rid: String!, $input: RotateResourceTokenInput!) { resource: rotateSessionResourceToken(sessionId: $id, id: $rid, input: $input) { ${RESOURCE} } }`,
    pick: (data) => data.resource,
    response: sessionResource,
    errors: ['invalid_request', 'egress_header_conflict'],
  }),
  defineRoute({
    method: 'DELETE', path: '/sessions/{id}/resources/{rid}', operationId: 'deleteSessionResource', tag: 'Session resources', scope: 'write',
    summary: 'Remove a file resource and its per-session copy (repositories answer 400)',
    document: `mutation Delete($id: String!, $rid: String!) { deleted: deleteSessionResource(sessionId: $id, id: $rid) { ${selectionOf(resourceDeleted)} } }`,
    pick: (data) => data.deleted,
    response: resourceDeleted,
    errors: ['invalid_request'],
  }),
];
