// An agent's tool policy in GraphQL: the `toolPolicy` field of Agent and `setAgentToolPolicy`,
// typed from the zod schema REST validates with (src/tools/policy.ts).
import { builder } from './builder.js';
import { AgentType } from './agents.js';
import { inputOf, objectOf } from './graphql-types.js';
import { takeInput } from './input.js';
import { toolPolicy } from '../tools/policy.js';
import { getToolPolicy, setToolPolicy } from '../agents/tool-policy.js';

const ToolPolicyType = objectOf(toolPolicy);

builder.objectField(AgentType, 'toolPolicy', (t) =>
  t.field({
    type: ToolPolicyType,
    description: 'Which tool calls wait for a confirmation before they run',
    resolve: (agent, _args, ctx) => getToolPolicy(ctx.viewer!, agent.id),
  }),
);

builder.queryField('agentToolPolicy', (t) =>
  t.field({
    type: ToolPolicyType,
    args: { id: t.arg.string({ required: true, description: 'agent id' }) },
    authScopes: { read: true },
    resolve: (_root, { id }, ctx) => getToolPolicy(ctx.viewer!, id),
  }),
);

builder.mutationField('setAgentToolPolicy', (t) =>
  t.field({
    type: ToolPolicyType,
    description: "Replace the agent's tool policy (applies to the next tool call of its sessions; bumps version)",
    args: { id: t.arg.string({ required: true, description: 'agent id' }), input: t.arg({ type: inputOf(toolPolicy, 'ToolPolicy'), required: true }) },
    authScopes: { write: true },
    resolve: (_root, { id, input }, ctx) => setToolPolicy(ctx.viewer!, id, takeInput(ctx, toolPolicy, input)),
  }),
);
