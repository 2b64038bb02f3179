// Agents: the create/patch/prompt/secret bodies and the agent as returned (list item and
// detail), with the spec's limits. One definition each for REST validation, OpenAPI, the GraphQL
// types and the domain's values; the enumerations and limits themselves are in ./rules.ts.
import { z } from 'zod';
import { dateTime } from '../contract/zod-walk.js';
import { reasoningEffort } from '../sessions/contract.js';
import { mcpServerAuth } from '../tools/mcp/auth.js';
import { AGENT_TYPES, LIMITS, SECRET_KEY_PATTERN } from './rules.js';
import { CAPABILITY_IDS } from '../catalog/capability-ids.js';
import { connectionCursor } from '../pagination/page-token.js';

export const agentType = z.enum(AGENT_TYPES).meta({ id: 'AgentType', description: 'The engine an agent runs (default hermes)' });
const customDataKind = z.enum(['spreadsheet', 'doc', 'private_api', 'other']).meta({ id: 'CustomDataKind' });
const customDataScope = z.enum(['creator', 'user']).meta({ id: 'CustomDataScope' });

// Capability ids contain dots, which GraphQL enum values cannot: a string checked against the
// list (and documented as an enum in OpenAPI).
const isCapability = (v: string) => (CAPABILITY_IDS as readonly string[]).includes(v);
const capabilityId = z
  .string()
  .refine(isCapability, { error: (i) => `unknown capability id ${JSON.stringify(i.input)}; known: ${CAPABILITY_IDS.join(', ')}` })
  .meta({ enum: [...CAPABILITY_IDS], description: 'A capability id' });

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

// ---- bodies ----

const instructionFileInput = strict({
  name: nonEmpty.max(255).regex(/\.md$/, 'must end in .md'),
  content: z.string().max(LIMITS.prompt).default(''),
}).meta({ id: 'AgentInstructionFileInput' });

const skillAttachmentInput = z
  .discriminatedUnion(
    'type',
    [
      strict({
        type: z.literal('skill'),
        skillId: nonEmpty.max(128),
        version: z
          .string()
          .regex(/^(latest|skr_[A-Za-z0-9]+)$/, 'latest or a skr_ revision id')
          .default('latest')
          .describe('latest (default) or a skr_ revision id'),
      }).meta({ id: 'AgentSkillRefInput', description: 'A skill of the universe' }),
      strict({
        type: z.literal('github'),
        url: z.url().max(2048),
        // null is accepted as "omitted" so a fetched agent's skills can be sent back unchanged.
        ref: nonEmpty.max(255).nullish().describe('branch or commit SHA; the default branch when omitted'),
        tokenSecretRef: z.string().regex(SECRET_KEY_PATTERN, 'must name an agent secret').nullish().describe('name of an agent secret holding a clone token'),
      }).meta({ id: 'AgentGithubSkillInput', description: 'A skill cloned from a GitHub repository' }),
    ],
    { error: () => 'type must be skill or github' },
  )
  .meta({ id: 'AgentSkillAttachmentInput' });

const toolFilter = z.array(nonEmpty.max(255)).max(LIMITS.toolFilter).default([]).describe('at most 200; default []');
const mcpServerInput = strict({
  type: z.literal('url').default('url'),
  name: z.string().min(1).max(LIMITS.mcpServerName),
  url: z.url().max(2048),
  tools: strict({ include: toolFilter, exclude: toolFilter }).meta({ id: 'AgentMcpServerToolsInput' }).default({ include: [], exclude: [] }),
  authentication: mcpServerAuth.nullish(),
}).meta({ id: 'AgentMcpServerInput' });

const customDataInput = strict({
  id: nonEmpty.max(128),
  name: z
    .string()
    .regex(/^[a-z0-9_]+$/, 'must match ^[a-z0-9_]+$')
    .max(128),
  kind: customDataKind,
  scope: customDataScope.default('creator'),
  description: z.string().max(2000).nullish(),
  uri: z.string().max(2048).nullish(),
  config: z.record(z.string(), z.string()).default({}).describe('string values'),
}).meta({ id: 'AgentCustomDataInput' });

// Multiagent (issue #32): a coordinator's roster of agents it may delegate to, each in a thread of
// its own. Names are what the delegation tools take (default: the agent's slug; `self`).
const rosterName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must match ^[A-Za-z0-9_-]{1,64}$')
  .describe("the name the coordinator's tools use; default the agent's slug (self: `self`)");
const rosterEntryInput = z
  .discriminatedUnion(
    'type',
    [
      strict({
        type: z.literal('agent'),
        id: nonEmpty.max(128).describe('an agent of the same universe, not archived, without a roster of its own'),
        name: rosterName.optional(),
      }).meta({
        id: 'MultiagentRosterAgentInput',
      }),
      strict({ type: z.literal('self'), name: rosterName.optional() }).meta({
        id: 'MultiagentRosterSelfInput',
        description: 'The coordinator itself, in a thread of its own',
      }),
    ],
    { error: () => 'type must be agent or self' },
  )
  .meta({ id: 'MultiagentRosterEntryInput' });
export const multiagentInput = strict({
  type: z.literal('coordinator'),
  agents: z.array(rosterEntryInput).min(1).max(LIMITS.rosterAgents).describe('1 to 20 roster entries, names unique'),
}).meta({
  id: 'MultiagentInput',
  description: 'Makes the agent a coordinator that delegates to these agents in threads (one level: no roster agent has a roster)',
});
export type MultiagentInput = z.output<typeof multiagentInput>;

const metadataInput = z.record(z.string().max(256), z.unknown()).describe('Client metadata (free-form)');
const capabilities = z.array(capabilityId).max(CAPABILITY_IDS.length * 2);

export const createAgentBody = strict({
  name: z.string().max(LIMITS.name).optional().describe('prompt/display label; defaults to displayName'),
  description: z.string().max(LIMITS.description).nullish(),
  agentType: agentType.optional().describe('default hermes'),
  llm: nonEmpty.max(200).optional().describe("a current model of the engine; default the engine's default model"),
  reasoningEffort: reasoningEffort.nullish().describe('must be allowed for the agentType; omitted: the engine default'),
  prompt: z.string().max(LIMITS.prompt).nullish().describe('becomes prompt version 1'),
  displayName: z.string().min(1).max(LIMITS.displayName).optional().describe('seeds the minted slug; an auto-generated name when omitted'),
  capabilities: capabilities.default([]).describe('explicit opt-in; default none'),
  instructions: z.array(instructionFileInput).max(LIMITS.instructions).default([]),
  skills: z.array(skillAttachmentInput).max(LIMITS.skills).default([]),
  mcpServers: z.array(mcpServerInput).max(LIMITS.mcpServers).default([]),
  customData: z.array(customDataInput).max(LIMITS.customData).default([]),
  metadata: metadataInput.default({}),
  multiagent: multiagentInput.nullish().describe('a coordinator roster; omitted or null: a single agent'),
}).meta({ id: 'CreateAgentInput', description: 'Every field optional: an empty input creates a hermes agent with no capabilities' });
export type CreateAgentBody = z.output<typeof createAgentBody>;

const PATCH_HINT =
  'PATCH accepts displayName, name, description, llm, capabilities, metadata, harnessVersion, reasoningEffort, instructions, skills, mcpServers, customData, multiagent, defaultSessionId, expectedVersion (the prompt is saved with PUT /agents/{id}/prompt)';

// The spec's PATCH fields, plus name, description, llm, instructions and customData (every
// creatable field except agentType, which would invalidate llm and reasoningEffort, and prompt,
// which is versioned through its own endpoint).
export const patchAgentBody = strict(
  {
    displayName: z.string().min(1).max(LIMITS.displayName).optional().describe('the slug stays as minted'),
    name: z.string().max(LIMITS.name).optional(),
    description: z.string().max(LIMITS.description).nullable().optional(),
    llm: nonEmpty.max(200).optional(),
    capabilities: capabilities.optional().describe('replaced whole; [] revokes all'),
    metadata: metadataInput.optional().describe('key-merged; a null value deletes the key'),
    harnessVersion: nonEmpty.max(100).optional().describe("any non-empty value moves the agent to the platform's current engine version"),
    reasoningEffort: reasoningEffort.nullable().optional().describe('null clears to the engine default'),
    instructions: z.array(instructionFileInput).max(LIMITS.instructions).optional(),
    skills: z.array(skillAttachmentInput).max(LIMITS.skills).optional().describe('replaces the whole array'),
    mcpServers: z.array(mcpServerInput).max(LIMITS.mcpServers).optional().describe('replaces the whole list'),
    customData: z.array(customDataInput).max(LIMITS.customData).optional(),
    multiagent: multiagentInput.nullable().optional().describe('replaced whole; null removes the roster; applies to sessions started after'),
    defaultSessionId: nonEmpty
      .max(128)
      .optional()
      .describe(
        'choose the session that verbs addressed by the agent id act on: a live session of this agent (it stays the default until archived or deleted)',
      ),
    expectedVersion: z.int32().min(1).optional().describe('optimistic concurrency: 409 version_conflict when the agent moved on'),
  },
  PATCH_HINT,
).meta({ id: 'UpdateAgentInput', description: 'Omitted fields are preserved; every update bumps version' });
export type PatchAgentBody = z.output<typeof patchAgentBody>;

export const putPromptBody = strict({
  prompt: z.string().max(LIMITS.prompt),
  note: z.string().max(LIMITS.promptNote).nullish().describe('kept with the prompt version'),
}).meta({ id: 'PutAgentPromptInput' });
export type PutPromptBody = z.output<typeof putPromptBody>;

export const putSecretBody = strict({
  value: z.string().min(1).max(LIMITS.secretValue).describe('write-only; never returned'),
  description: z.string().max(LIMITS.secretDescription).optional(),
}).meta({ id: 'PutAgentSecretInput' });
export type PutSecretBody = z.output<typeof putSecretBody>;

// Strict like every list's query: an unknown parameter is a 400 naming it, not silently ignored.
export const listAgentsQuery = z.strictObject({
  archived: z.enum(['true', 'false']).optional().describe('only archived (true) or only active (false) agents; both when omitted'),
  // Paged like GET /skills; the default keeps a plain GET answering up to 1000 agents at once.
  cursor: connectionCursor('agent').optional().describe('the nextCursor of the previous answer'),
  limit: z.coerce.number().int().min(1).max(1000).default(1000).describe('1 to 1000, default 1000'),
});

// ---- answers ----

const listItemFields = {
  id: z.string().describe("agent_<id>, the agent's only address"),
  name: z.string().describe('prompt/display label only, not the handle'),
  displayName: z.string(),
  agentType,
  llm: z.string(),
  harnessVersion: z
    .string()
    .nullable()
    .describe("engine CLI version the agent's sessions run; any successful PATCH moves it to the platform's current version"),
  reasoningEffort: reasoningEffort.nullable().describe('null: the engine default'),
  capabilities: z.array(capabilityId),
  version: z.int32().min(1).describe('bumped on every update'),
  archived: z.boolean(),
  sessionCount: z.int32().min(0),
  createdAt: dateTime(z.string()),
};
export const agentListItem = z.strictObject(listItemFields).meta({ id: 'AgentListItem' });

const mcpServerBody = z
  .strictObject({
    type: z.literal('url'),
    name: z.string(),
    url: z.string(),
    tools: z.strictObject({ include: z.array(z.string()), exclude: z.array(z.string()) }).meta({ id: 'AgentMcpServerTools' }),
  })
  .meta({ id: 'AgentMcpServer', description: 'A remote tool-server reference; runtime authentication is never returned' });
export type McpServerView = z.output<typeof mcpServerBody>;

const skillRefBody = z
  .strictObject({
    type: z.literal('skill'),
    skillId: z.string(),
    version: z.string().describe('latest or a skr_ revision id'),
  })
  .meta({ id: 'AgentSkillRef', description: 'A skill of the universe: `latest` follows its latestRevisionId; a skr_ id pins a revision' });
const githubSkillBody = z
  .strictObject({
    type: z.literal('github'),
    url: z.string(),
    ref: z.string().nullable().describe('branch or commit SHA; null: the default branch'),
    tokenSecretRef: z.string().nullable().describe('name of the agent secret holding a clone token'),
  })
  .meta({ id: 'AgentGithubSkill', description: 'A skill cloned from a GitHub repository' });
const skillAttachmentBody = z.discriminatedUnion('type', [skillRefBody, githubSkillBody]).meta({ id: 'AgentSkillAttachment' });
export type SkillAttachmentView = z.output<typeof skillAttachmentBody>;

const customDataBody = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    kind: customDataKind,
    scope: customDataScope,
    description: z.string().nullable(),
    uri: z.string().nullable(),
    config: z.record(z.string(), z.string()).describe('string values'),
  })
  .meta({ id: 'AgentCustomData' });
export type CustomDataView = z.output<typeof customDataBody>;

const instructionFileBody = z.strictObject({ name: z.string(), content: z.string() }).meta({ id: 'AgentInstructionFile' });
export type InstructionView = z.output<typeof instructionFileBody>;

const rosterEntryBody = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('agent'), id: z.string(), name: z.string() }).meta({ id: 'MultiagentRosterAgent' }),
    z.strictObject({ type: z.literal('self'), name: z.string() }).meta({ id: 'MultiagentRosterSelf' }),
  ])
  .meta({ id: 'MultiagentRosterEntry' });
export const multiagentBody = z
  .strictObject({ type: z.literal('coordinator'), agents: z.array(rosterEntryBody) })
  .meta({ id: 'Multiagent', description: "A coordinator's roster: the agents it delegates to, each in a thread of its own" });
export type MultiagentView = z.output<typeof multiagentBody>;

export const agentBody = z
  .strictObject({
    ...listItemFields,
    slug: z.string().describe('the unique handle minted from displayName at create'),
    description: z.string().nullable(),
    prompt: z.string().nullable().describe('the active prompt version'),
    promptVersion: z.int32().nullable(),
    mcpServers: z.array(mcpServerBody),
    skills: z.array(skillAttachmentBody),
    instructions: z.array(instructionFileBody),
    customData: z.array(customDataBody),
    metadata: z.record(z.string(), z.unknown()).describe('client metadata, key-merged on update'),
    defaultSessionId: z
      .string()
      .nullable()
      .describe(
        'the session the service verbs target when addressed by agent id: a live session of the agent (the first one created, or the one chosen with PATCH; when it is archived or deleted, the newest live one), null when the agent has none',
      ),
    universe: z.string().describe('slug of the universe'),
    multiagent: multiagentBody.nullable().describe('the roster of a coordinator (names resolved); null: a single agent'),
  })
  .meta({ id: 'Agent' });
export type AgentView = z.output<typeof agentBody>;

export const promptVersionBody = z
  .strictObject({
    version: z.int32(),
    note: z.string().nullable(),
    createdAt: dateTime(z.string()),
    active: z.boolean(),
    content: z.string(),
  })
  .meta({ id: 'PromptVersion' });
export type PromptVersionView = z.output<typeof promptVersionBody>;

export const promptUpdateResult = z
  .strictObject({
    version: z.int32().describe('the active prompt version after the save'),
    unchanged: z.boolean().describe('the content equals the active version; nothing was written'),
  })
  .meta({ id: 'PromptUpdateResult' });

export const secretKeyBody = z
  .strictObject({ key: z.string(), description: z.string() })
  .meta({ id: 'SecretKey', description: 'A declared agent secret; its value is never returned' });

export const agentAnswer = z.strictObject({ agent: agentBody }).meta({ id: 'AgentAnswer' });
export const agentList = z
  .strictObject({
    agents: z.array(agentListItem).describe('Newest first'),
    nextCursor: z.string().nullable().describe('Pass back as ?cursor= for the next page; null on the last page'),
  })
  .meta({ id: 'AgentList' });
export const promptVersionList = z.strictObject({ versions: z.array(promptVersionBody).describe('Newest first') }).meta({ id: 'PromptVersionList' });
export const secretKeyList = z.strictObject({ secrets: z.array(secretKeyBody) }).meta({ id: 'SecretKeyList' });
