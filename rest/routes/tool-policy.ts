// /agents/{id}/tool-policy: which tool calls of the agent's sessions wait for a person's
// confirmation (user.tool_confirmation) before they run. Beyond the spec; see docs/tools.md.
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { toolPolicy } from '../../src/tools/policy.js';
import { selectionOf } from '../../src/contract/values.js';

const POLICY = selectionOf(toolPolicy);
const answer = z.strictObject({ toolPolicy });

export const toolPolicyRoutes = [
  defineRoute({
    method: 'GET',
    path: '/agents/{id}/tool-policy',
    operationId: 'getAgentToolPolicy',
    tag: 'Agents',
    scope: 'read',
    summary: "The agent's tool policy (default: every call runs at once)",
    document: `query AgentToolPolicy($id: String!) { toolPolicy: agentToolPolicy(id: $id) { ${POLICY} } }`,
    response: answer,
  }),
  defineRoute({
    method: 'PUT',
    path: '/agents/{id}/tool-policy',
    operationId: 'setAgentToolPolicy',
    tag: 'Agents',
    scope: 'write',
    summary: "Replace the agent's tool policy: `always_ask` rules make matching calls wait for a user.tool_confirmation",
    body: toolPolicy,
    document: `mutation SetAgentToolPolicy($id: String!, $input: ToolPolicyInput!) { toolPolicy: setAgentToolPolicy(id: $id, input: $input) { ${POLICY} } }`,
    response: answer,
    errors: ['invalid_request', 'conflict'],
  }),
];
