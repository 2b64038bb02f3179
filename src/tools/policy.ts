// An agent's tool policy: which tool calls run at once and which wait for a person to confirm
// them (`user.tool_confirmation`). The default is `always_allow`; rules name a tool as offered
// to the model (`bash`, `mcp__docs__search`, `exa_search`), a remote tool server (every tool
// of it) or a capability id. The most specific rule wins: tool, then server or capability,
// then the default.
import { z } from 'zod';

export const TOOL_POLICIES = ['always_allow', 'always_ask'] as const;
export const toolPolicyValue = z.enum(TOOL_POLICIES).meta({ id: 'ToolPolicyValue' });

export const toolPolicyRule = z
  .strictObject({
    target: z.enum(['tool', 'mcp_server', 'capability']).meta({
      id: 'ToolPolicyTarget',
      description: 'tool: a tool name as offered to the model; mcp_server: every tool of the named server; capability: a capability id',
    }),
    name: z.string().min(1).max(255),
    policy: toolPolicyValue,
  })
  .meta({ id: 'ToolPolicyRule' });

export const toolPolicy = z
  .strictObject({
    default: toolPolicyValue.default('always_allow'),
    rules: z.array(toolPolicyRule).max(200).default([]),
  })
  .meta({ id: 'ToolPolicy', description: 'Which tool calls wait for a confirmation (user.tool_confirmation) before they run' });
export type ToolPolicy = z.output<typeof toolPolicy>;

/** The stored JSON as a policy (anything unreadable: the default, allow everything). */
export function parseToolPolicy(stored: unknown): ToolPolicy {
  const parsed = toolPolicy.safeParse(stored ?? {});
  return parsed.success ? parsed.data : { default: 'always_allow', rules: [] };
}

export interface ToolIdentity {
  name: string;
  server: string | null;
  capability: string | null;
}

export function decideTool(policy: ToolPolicy, tool: ToolIdentity): 'run' | 'ask' {
  const rule =
    policy.rules.find((r) => r.target === 'tool' && r.name === tool.name) ??
    policy.rules.find((r) => (r.target === 'mcp_server' && r.name === tool.server) || (r.target === 'capability' && r.name === tool.capability));
  return (rule?.policy ?? policy.default) === 'always_ask' ? 'ask' : 'run';
}
