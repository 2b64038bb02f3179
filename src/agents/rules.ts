// Agent enumerations and request bodies with the spec's limits. The REST edge and the GraphQL
// resolvers validate with these same schemas, so both surfaces refuse exactly the same input.
import { z } from 'zod';
import { REASONING_EFFORT_VALUES } from '../sessions/contract.js';

export const AGENT_TYPES = ['hermes', 'claude_code', 'codex', 'openclaw', 'pi', 'dsh', 'kimi_code', 'opencode'] as const;
export type AgentType = (typeof AGENT_TYPES)[number];
export const DEFAULT_AGENT_TYPE: AgentType = 'hermes';

export const CAPABILITY_IDS = [
  'exa.search', 'exa.contents', 'tinyfish.fetch', 'tinyfish.browser', 'dataforseo.serp',
  'gptimage.generate', 'rembg.remove-background', 'seedance.generate', 'mm.i2v', 'fish-audio.transcribe',
] as const;
export type CapabilityId = (typeof CAPABILITY_IDS)[number];

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
} as const;

/** Secret keys travel in the URL path and become environment-style names: a conservative set. */
export const SECRET_KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

const nonEmpty = z.string().min(1);

/** Strict objects, with a message that names the unknown fields. */
function strict<T extends z.core.$ZodLooseShape>(shape: T, allowedHint?: string) {
  return z.strictObject(shape, {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `unknown field${iss.keys.length > 1 ? 's' : ''} ${iss.keys.join(', ')}${allowedHint ? `; ${allowedHint}` : ''}`
        : undefined,
  });
}

export const instructionFile = strict({
  name: nonEmpty.max(255).regex(/.*\.md$/, 'must end in .md'),
  content: z.string().max(LIMITS.prompt).default(''),
}).meta({ id: 'InstructionFileInput' });

export const skillAttachment = z.discriminatedUnion('type', [
  strict({
    type: z.literal('skill'),
    skillId: nonEmpty.max(128),
    version: z.union([z.literal('latest'), z.string().regex(/^skr_[A-Za-z0-9]+$/, 'latest or a skr_ revision id')]).default('latest'),
  }),
  strict({
    type: z.literal('github'),
    url: z.url().max(2048),
    // null is accepted as "omitted" so a fetched agent's skills can be sent back unchanged.
    ref: nonEmpty.max(255).nullish().describe('branch or commit SHA; the default branch when omitted'),
    tokenSecretRef: z.string().regex(SECRET_KEY_PATTERN, 'must name an agent secret').nullish().describe('name of an agent secret holding a clone token'),
  }),
], { error: () => 'type must be skill or github' }).meta({ id: 'SkillAttachmentInput' });

const toolFilter = z.array(nonEmpty.max(255)).max(LIMITS.toolFilter).default([]);
export const mcpServer = strict({
  type: z.literal('url').default('url'),
  name: z.string().min(1).max(LIMITS.mcpServerName),
  url: z.url().max(2048),
  tools: strict({ include: toolFilter, exclude: toolFilter }).default({ include: [], exclude: [] }),
}).meta({ id: 'McpServerInput' });

export const customDataItem = strict({
  id: nonEmpty.max(128),
  name: z.string().regex(/^[a-z0-9_]+$/, 'must match ^[a-z0-9_]+$').max(128),
  kind: z.enum(['spreadsheet', 'doc', 'private_api', 'other']),
  scope: z.enum(['creator', 'user']).default('creator'),
  description: z.string().max(2000).nullish(),
  uri: z.string().max(2048).nullish(),
  config: z.record(z.string(), z.string()).default({}),
}).meta({ id: 'CustomDataInput' });

const metadata = z.record(z.string().max(256), z.unknown());
export const reasoningEffortValue = z.enum(REASONING_EFFORT_VALUES);
const capabilities = z
  .array(z.enum(CAPABILITY_IDS, { error: (i) => `unknown capability id ${JSON.stringify(i.input)}; known: ${CAPABILITY_IDS.join(', ')}` }))
  .max(CAPABILITY_IDS.length * 2);

export const createAgentBody = strict({
  name: z.string().max(LIMITS.name).optional().describe('prompt/display label; defaults to displayName'),
  description: z.string().max(LIMITS.description).nullish(),
  agentType: z.enum(AGENT_TYPES).optional().describe('default hermes'),
  llm: nonEmpty.max(200).optional().describe("a current model of the engine; default the engine's default model"),
  reasoningEffort: reasoningEffortValue.nullish().describe('must be allowed for the agentType; omitted: the engine default'),
  prompt: z.string().max(LIMITS.prompt).nullish().describe('becomes prompt version 1'),
  displayName: z.string().min(1).max(LIMITS.displayName).optional().describe('seeds the minted slug; an auto-generated name when omitted'),
  capabilities: capabilities.default([]).describe('explicit opt-in; default none'),
  instructions: z.array(instructionFile).max(LIMITS.instructions).default([]),
  skills: z.array(skillAttachment).max(LIMITS.skills).default([]),
  mcpServers: z.array(mcpServer).max(LIMITS.mcpServers).default([]),
  customData: z.array(customDataItem).max(LIMITS.customData).default([]),
  metadata: metadata.default({}),
}).meta({ id: 'CreateAgentBody' });
export type CreateAgentBody = z.infer<typeof createAgentBody>;

const PATCH_HINT = 'PATCH accepts displayName, name, description, llm, capabilities, metadata, harnessVersion, reasoningEffort, instructions, skills, mcpServers, customData, expectedVersion (the prompt is saved with PUT /agents/{id}/prompt)';

// The spec's PATCH fields, plus name, description, llm, instructions and customData (every
// creatable field except agentType, which would invalidate llm and reasoningEffort, and prompt,
// which is versioned through its own endpoint).
export const patchAgentBody = strict({
  displayName: z.string().min(1).max(LIMITS.displayName).optional().describe('the slug stays as minted'),
  name: z.string().max(LIMITS.name).optional(),
  description: z.string().max(LIMITS.description).nullable().optional(),
  llm: nonEmpty.max(200).optional(),
  capabilities: capabilities.optional().describe('replaced whole; [] revokes all'),
  metadata: metadata.optional().describe('key-merged; a null value deletes the key'),
  harnessVersion: nonEmpty.max(100).optional().describe("any non-empty value moves the agent to the platform's current engine version"),
  reasoningEffort: reasoningEffortValue.nullable().optional().describe('null clears to the engine default'),
  instructions: z.array(instructionFile).max(LIMITS.instructions).optional(),
  skills: z.array(skillAttachment).max(LIMITS.skills).optional().describe('replaces the whole array'),
  mcpServers: z.array(mcpServer).max(LIMITS.mcpServers).optional().describe('replaces the whole list'),
  customData: z.array(customDataItem).max(LIMITS.customData).optional(),
  expectedVersion: z.number().int().min(1).optional().describe('optimistic concurrency: 409 version_conflict when the agent moved on'),
}, PATCH_HINT).meta({ id: 'PatchAgentBody' });
export type PatchAgentBody = z.infer<typeof patchAgentBody>;

export const putPromptBody = strict({
  prompt: z.string().max(LIMITS.prompt),
  note: z.string().max(LIMITS.promptNote).nullish().describe('kept with the prompt version'),
}).meta({ id: 'PutPromptBody' });

export const putSecretBody = strict({
  value: z.string().min(1).max(LIMITS.secretValue).describe('write-only; never returned'),
  description: z.string().max(LIMITS.secretDescription).optional(),
}).meta({ id: 'PutSecretBody' });

// Query strings may carry unrelated parameters (cache busters): not strict.
export const listAgentsQuery = z.object({
  archived: z.enum(['true', 'false']).optional().describe('only archived (true) or only active (false) agents; both when omitted'),
});
