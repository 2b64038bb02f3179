// The typed parts of an agent, as GraphQL output objects and inputs: remote tool servers, skill
// attachments, custom data, instruction files. Open shapes (metadata, custom data config) are
// JSONObject. Inputs mirror the REST body one to one; the zod schemas of src/agents/rules.ts
// then judge them, so GraphQL and REST refuse the same things with the same codes.
import { builder } from './builder.js';
import { AGENT_TYPES } from '../agents/rules.js';
import { enumOf } from '../contract/graphql-types.js';
import { reasoningEffort } from '../sessions/contract.js';
import type { CustomDataView, InstructionView, McpServerView, SkillView } from '../agents/shapes.js';

export const ReasoningEffortEnum = enumOf(reasoningEffort);

export const AgentTypeEnum = builder.enumType('AgentType', {
  description: 'The engine an agent runs (default hermes)',
  values: AGENT_TYPES,
});
const McpServerTypeEnum = builder.enumType('McpServerType', { values: ['url'] as const });
const SkillAttachmentTypeEnum = builder.enumType('SkillAttachmentType', { values: ['skill', 'github'] as const });
const CustomDataKindEnum = builder.enumType('CustomDataKind', { values: ['spreadsheet', 'doc', 'private_api', 'other'] as const });
const CustomDataScopeEnum = builder.enumType('CustomDataScope', { values: ['creator', 'user'] as const });

// ── output ──────────────────────────────────────────────────────────────────────────────────

const McpServerTools = builder.objectRef<McpServerView['tools']>('AgentMcpServerTools').implement({
  fields: (t) => ({ include: t.exposeStringList('include'), exclude: t.exposeStringList('exclude') }),
});

export const AgentMcpServer = builder.objectRef<McpServerView>('AgentMcpServer').implement({
  description: 'A remote tool-server reference; runtime authentication fields are never returned',
  fields: (t) => ({
    type: t.field({ type: McpServerTypeEnum, resolve: (m) => m.type }),
    name: t.exposeString('name'),
    url: t.exposeString('url'),
    tools: t.field({ type: McpServerTools, resolve: (m) => m.tools }),
  }),
});

type SkillRefView = Extract<SkillView, { type: 'skill' }>;
type GithubSkillView = Extract<SkillView, { type: 'github' }>;

const AgentSkillRef = builder.objectRef<SkillRefView>('AgentSkillRef').implement({
  description: 'A skill of the universe: `latest` follows its latestRevisionId; a skr_ id pins a revision',
  fields: (t) => ({
    type: t.field({ type: SkillAttachmentTypeEnum, resolve: () => 'skill' as const }),
    skillId: t.exposeString('skillId'),
    version: t.exposeString('version'),
  }),
});

const AgentGithubSkill = builder.objectRef<GithubSkillView>('AgentGithubSkill').implement({
  description: 'A skill cloned from a GitHub repository',
  fields: (t) => ({
    type: t.field({ type: SkillAttachmentTypeEnum, resolve: () => 'github' as const }),
    url: t.exposeString('url'),
    ref: t.exposeString('ref', { nullable: true, description: 'branch or commit SHA; null: the default branch' }),
    tokenSecretRef: t.exposeString('tokenSecretRef', { nullable: true, description: 'name of the agent secret holding a clone token' }),
  }),
});

export const AgentSkillAttachment = builder.unionType('AgentSkillAttachment', {
  types: [AgentSkillRef, AgentGithubSkill],
  resolveType: (s) => (s.type === 'github' ? AgentGithubSkill : AgentSkillRef),
});

export const AgentCustomData = builder.objectRef<CustomDataView>('AgentCustomData').implement({
  fields: (t) => ({
    id: t.exposeString('id'),
    name: t.exposeString('name'),
    kind: t.field({ type: CustomDataKindEnum, resolve: (d) => d.kind }),
    scope: t.field({ type: CustomDataScopeEnum, resolve: (d) => d.scope }),
    description: t.exposeString('description', { nullable: true }),
    uri: t.exposeString('uri', { nullable: true }),
    config: t.field({ type: 'JSONObject', description: 'string values', resolve: (d) => d.config }),
  }),
});

export const AgentInstructionFile = builder.objectRef<InstructionView>('AgentInstructionFile').implement({
  fields: (t) => ({ name: t.exposeString('name'), content: t.exposeString('content') }),
});

// ── input ───────────────────────────────────────────────────────────────────────────────────

const InstructionFileInput = builder.inputType('AgentInstructionFileInput', {
  fields: (t) => ({
    name: t.string({ required: true, description: 'ends in .md' }),
    content: t.string({ description: 'default empty' }),
  }),
});

const SkillInput = builder.inputType('AgentSkillInput', {
  description: 'type skill: skillId (required), version (latest or skr_…; default latest). type github: url (required), ref, tokenSecretRef',
  fields: (t) => ({
    type: t.field({ type: SkillAttachmentTypeEnum, required: true }),
    skillId: t.string(),
    version: t.string(),
    url: t.string(),
    ref: t.string(),
    tokenSecretRef: t.string(),
  }),
});

const McpServerToolsInput = builder.inputType('AgentMcpServerToolsInput', {
  fields: (t) => ({
    include: t.stringList({ description: 'max 200; default []' }),
    exclude: t.stringList({ description: 'max 200; default []' }),
  }),
});

const McpServerInput = builder.inputType('AgentMcpServerInput', {
  fields: (t) => ({
    type: t.field({ type: McpServerTypeEnum, description: 'default url' }),
    name: t.string({ required: true, description: '1 to 255 characters' }),
    url: t.string({ required: true, description: 'URI' }),
    tools: t.field({ type: McpServerToolsInput }),
  }),
});

const CustomDataInput = builder.inputType('AgentCustomDataInput', {
  fields: (t) => ({
    id: t.string({ required: true }),
    name: t.string({ required: true, description: 'matches ^[a-z0-9_]+$' }),
    kind: t.field({ type: CustomDataKindEnum, required: true }),
    scope: t.field({ type: CustomDataScopeEnum, description: 'default creator' }),
    description: t.string(),
    uri: t.string(),
    config: t.field({ type: 'JSONObject', description: 'string values; default {}' }),
  }),
});

export const CreateAgentInput = builder.inputType('CreateAgentInput', {
  description: 'Every field optional: an empty input creates a hermes agent with no capabilities',
  fields: (t) => ({
    name: t.string({ description: 'max 60; default displayName' }),
    description: t.string({ description: 'max 500' }),
    agentType: t.field({ type: AgentTypeEnum, description: 'default hermes' }),
    llm: t.string({ description: "a current model of the engine; default the engine's default" }),
    reasoningEffort: t.field({ type: ReasoningEffortEnum, description: 'must be allowed for the agentType' }),
    prompt: t.string({ description: 'max 100000; becomes prompt version 1' }),
    displayName: t.string({ description: 'max 60; seeds the slug' }),
    capabilities: t.stringList({ description: 'capability ids; default none' }),
    instructions: t.field({ type: [InstructionFileInput] }),
    skills: t.field({ type: [SkillInput], description: 'max 20' }),
    mcpServers: t.field({ type: [McpServerInput], description: 'max 20' }),
    customData: t.field({ type: [CustomDataInput] }),
    metadata: t.field({ type: 'JSONObject' }),
  }),
});

export const UpdateAgentInput = builder.inputType('UpdateAgentInput', {
  description: 'Omitted fields are preserved; every update bumps version',
  fields: (t) => ({
    displayName: t.string({ description: 'max 60' }),
    name: t.string({ description: 'max 60' }),
    description: t.string({ description: 'max 500; null clears' }),
    llm: t.string(),
    capabilities: t.stringList({ description: 'replaced whole; [] revokes all' }),
    metadata: t.field({ type: 'JSONObject', description: 'key-merged; a null value deletes the key' }),
    harnessVersion: t.string({ description: "non-empty; moves the agent to the platform's current engine version" }),
    reasoningEffort: t.field({ type: ReasoningEffortEnum, description: 'null clears to the engine default' }),
    instructions: t.field({ type: [InstructionFileInput] }),
    skills: t.field({ type: [SkillInput], description: 'replaces the whole array' }),
    mcpServers: t.field({ type: [McpServerInput], description: 'replaces the whole list' }),
    customData: t.field({ type: [CustomDataInput] }),
    expectedVersion: t.int({ description: '409 version_conflict when the agent is at another version' }),
  }),
});
