// Agent enumerations, the engines' reasoningEffort table and the limits: the data the agent
// rules check against (the capability ids are the catalog's, src/catalog/capability-ids.ts).
// The request and answer schemas built on them are in ./contract.ts.

export const AGENT_TYPES = ['hermes', 'claude_code', 'codex', 'openclaw', 'pi', 'dsh', 'kimi_code', 'opencode'] as const;
export type AgentType = (typeof AGENT_TYPES)[number];
export const DEFAULT_AGENT_TYPE: AgentType = 'hermes';

/** reasoningEffort values each engine accepts (an empty list: not supported). */
export const EFFORTS_BY_TYPE: Record<AgentType, readonly string[]> = {
  hermes: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max', 'ultra'],
  claude_code: ['low', 'medium', 'high', 'xhigh', 'max'],
  codex: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'],
  openclaw: [],
  pi: ['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'],
  dsh: [],
  kimi_code: [],
  opencode: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'],
};

export const LIMITS = {
  name: 60,
  displayName: 60,
  description: 500,
  prompt: 100_000,
  skills: 20,
  mcpServers: 20,
  mcpServerName: 255,
  toolFilter: 200,
  secretValue: 10_000,
  secretDescription: 500,
  // Not in the spec (it bounds only session instructions, at 20): the same bound for agents,
  // and generous caps on the open-ended lists so one body cannot grow without end.
  instructions: 20,
  customData: 100,
  promptNote: 500,
  // Multiagent (issue #32): entries of a coordinator's roster.
  rosterAgents: 20,
} as const;

/** Secret keys travel in the URL path and become environment-style names: a conservative set. */
export const SECRET_KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
