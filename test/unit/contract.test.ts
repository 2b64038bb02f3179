// The typed contract's converters: a spec-shaped body goes to GraphQL variables, through
// graphql-js's own input coercion against the generated types, and comes back unchanged; a
// GraphQL result converts to the spec's shape by the response schema.
import { describe, it, expect } from 'vitest';
import { coerceInputValue, isInputObjectType, graphql } from 'graphql';
import { schema } from '../../src/graphql/schema.js';
import { toGraphQLInput, fromGraphQLInput, fromGraphQLOutput } from '../../src/contract/values.js';
import { createSessionBody } from '../../src/sessions/contract.js';
import { sendEventsBody } from '../../src/events/content.js';
import { sessionEvent } from '../../src/events/types.js';

function roundTrip(typeName: string, zodSchema: Parameters<typeof toGraphQLInput>[0], body: unknown) {
  const type = schema.getType(typeName);
  if (!isInputObjectType(type)) throw new Error(`${typeName} is not an input type`);
  const variables = toGraphQLInput(zodSchema, zodSchema.parse(body));
  const errors: string[] = [];
  const coerced = coerceInputValue(variables, type, (path, _v, e) => errors.push(`${path.join('.')}: ${e.message}`));
  expect(errors).toEqual([]);
  return zodSchema.parse(fromGraphQLInput(zodSchema, coerced));
}

describe('typed contract', () => {
  it('a create-session body with every union survives REST → GraphQL coercion → domain unchanged', () => {
    const body = {
      agent: 'agent_x',
      reasoningEffort: 'high',
      metadata: { a: 1, nested: { b: [true] } },
      modelBilling: 'account',
      initial_events: [
        {
          type: 'user.message',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
            { type: 'document', source: { type: 'text', data: 'plain' }, title: 'notes' },
          ],
        },
      ],
      budget: { type: 'limit', max_list_cost: { amount: '250', currency: 'USD' } },
      resources: [
        { type: 'file', file_id: 'file_1', mount_path: '/data/a.csv' },
        { type: 'github_repository', url: 'https://github.com/o/r', checkout: { type: 'commit', sha: 'abcdef1' } },
      ],
    };
    expect(roundTrip('CreateSessionInput', createSessionBody, body)).toEqual(createSessionBody.parse(body));
  });

  it('send-events unions (@oneOf) carry interrupts, system messages and file sources', () => {
    const body = {
      events: [
        { type: 'system.message', content: [{ type: 'text', text: 'be brief' }] },
        { type: 'user.message', content: [{ type: 'image', source: { type: 'file', file_id: 'file_2' } }] },
        { type: 'user.interrupt' },
      ],
    };
    expect(roundTrip('SendSessionEventsInput', sendEventsBody, body)).toEqual(body);
  });

  it('a @oneOf input with two members set is refused by GraphQL itself', async () => {
    const res = await graphql({
      schema,
      source: `mutation { sendSessionEvents(sessionId: "s", input: { events: [{ userInterrupt: {}, systemMessage: { content: [{ text: "x" }] } }] }) { __typename } }`,
    });
    expect(res.errors?.[0]?.message).toMatch(/exactly one key/i);
  });

  it('a GraphQL result of the event union converts back to the spec shape, snake_case and all', () => {
    const graph = { id: 'evt_1', type: 'session.status_idle', sessionId: 's', agentId: null, at: '2026-01-01T00:00:00.000Z', stopReason: { type: 'end_turn' } };
    expect(fromGraphQLOutput(sessionEvent, graph)).toEqual({
      id: 'evt_1',
      type: 'session.status_idle',
      sessionId: 's',
      agentId: null,
      at: '2026-01-01T00:00:00.000Z',
      stop_reason: { type: 'end_turn' },
    });
  });
});
