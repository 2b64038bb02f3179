// Agent enumerations and request bodies with the spec's limits.
import { z } from 'zod';
import { REASONING_EFFORT_VALUES } from '../sessions/rules.js';

export const AGENT_TYPES = ['hermes', 'claude_code', 'codex', 'openclaw', 'pi', 'dsh', 'kimi_code', 'opencode'] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

export const CAPABILITY_IDS = [
  'exa.search', 'exa.contents', 'tinyfish.fetch', 'tinyfish.browser', 'dataforseo.serp',
  'gptimage.generate', 'rembg.remove-background', 'seedance.generate', 'mm.i2v', 'fish-audio.transcribe',
] as const;

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

const nonEmpty = z.string().min(1);

export const instructionFile = z.strictObject({
  name: nonEmpty.max(255).regex(/.*\.md$/, 'must end in .md'),
  content: z.string().max(100_000).default(''),
});

export const skillAttachment = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('skill'),
    skillId: nonEmpty.max(128),
    version: z.union([z.literal('latest'), z.string().regex(/^skr_[A-Za-z0-9]+$/, 'latest or a skr_ revision id')]).default('latest'),
  }),
  z.strictObject({
    type: z.literal('github'),
    url: z.url().max(2048),
    ref: nonEmpty.max(255).optional(),
    tokenSecretRef: nonEmpty.max(128).optional(),
  }),
]);

const toolFilter = z.array(nonEmpty.max(255)).max(200).default([]);
export const mcpServer = z.strictObject({
  type: z.literal('url').default('url'),
  name: z.string().min(1).max(255),
  url: z.url().max(2048),
  tools: z.strictObject({ include: toolFilter, exclude: toolFilter }).default({ include: [], exclude: [] }),
});

export const customDataItem = z.strictObject({
  id: nonEmpty.max(128),
  name: z.string().regex(/^[a-z0-9_]+$/, 'must match ^[a-z0-9_]+$').max(128),
  kind: z.enum(['spreadsheet', 'doc', 'private_api', 'other']),
  scope: z.enum(['creator', 'user']).default('creator'),
  description: z.string().max(2000).nullish(),
  uri: z.string().max(2048).nullish(),
  config: z.record(z.string(), z.string()).default({}),
});

const metadata = z.record(z.string().max(256), z.unknown());
const reasoningEffort = z.enum(REASONING_EFFORT_VALUES);
const capabilities = z.array(z.enum(CAPABILITY_IDS, { error: (i) => `unknown capability id ${JSON.stringify(i.input)}` })).max(CAPABILITY_IDS.length * 2);

export const createAgentBody = z.strictObject({
  name: z.string().max(60).optional(),
  description: z.string().max(500).nullish(),
  agentType: z.enum(AGENT_TYPES).optional(),
  llm: nonEmpty.max(200).optional(),
  reasoningEffort: reasoningEffort.nullish(),
  prompt: z.string().max(100_000).nullish(),
  displayName: z.string().min(1).max(60).optional(),
  capabilities: capabilities.default([]),
  instructions: z.array(instructionFile).max(20).default([]),
  skills: z.array(skillAttachment).max(20).default([]),
  mcpServers: z.array(mcpServer).max(20).default([]),
  customData: z.array(customDataItem).max(100).default([]),
  metadata: metadata.default({}),
});
export type CreateAgentBody = z.infer<typeof createAgentBody>;

export const patchAgentBody = z.strictObject({
  displayName: z.string().min(1).max(60).optional(),
  name: z.string().max(60).optional(),
  description: z.string().max(500).nullable().optional(),
  llm: nonEmpty.max(200).optional(),
  capabilities: capabilities.optional(),
  metadata: z.record(z.string().max(256), z.unknown()).optional(),
  harnessVersion: nonEmpty.max(100).optional(),
  reasoningEffort: reasoningEffort.nullable().optional(),
  instructions: z.array(instructionFile).max(20).optional(),
  skills: z.array(skillAttachment).max(20).optional(),
  mcpServers: z.array(mcpServer).max(20).optional(),
  customData: z.array(customDataItem).max(100).optional(),
  expectedVersion: z.number().int().min(1).optional(),
});
export type PatchAgentBody = z.infer<typeof patchAgentBody>;

export const putPromptBody = z.strictObject({ prompt: z.string().max(100_000), note: z.string().max(500).nullish() });

export const SECRET_KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
export const putSecretBody = z.strictObject({ value: z.string().min(1).max(10_000), description: z.string().max(500).optional() });
