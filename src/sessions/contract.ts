// Sessions: the create/patch bodies and the session as returned, with the spec's limits. One
// definition each for REST validation, OpenAPI, the GraphQL types and the domain's values.
import { z } from 'zod';
import { dateTime } from '../contract/zod-walk.js';
import { evaluationResult, outcomeCriterion } from '../events/types.js';
import { initialEvents } from '../events/content.js';
import { resourceInput, sessionResource } from '../resources/contract.js';
import { usageCounters } from '../events/types.js';

export const REASONING_EFFORT_VALUES = ['none', 'off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max', 'ultra'] as const;
export const reasoningEffort = z.enum(REASONING_EFFORT_VALUES).meta({ id: 'ReasoningEffort' });
export const modelBilling = z.enum(['platform', 'account']).meta({ id: 'ModelBilling' });
export const sessionStatus = z.enum(['provisioning', 'idle', 'running', 'terminated']).meta({ id: 'SessionStatus' });

export const instructionFile = z
  .strictObject({
    name: z.string().min(1).regex(/\.md$/, 'must end in .md'),
    content: z.string().max(100_000).default(''),
  })
  .meta({ id: 'InstructionFile' });

export const monetaryAmount = z
  .strictObject({
    amount: z.string().regex(/^[0-9]{1,15}$/, 'whole US cents as digits (1 to 15 characters)'),
    currency: z.literal('USD'),
  })
  .meta({ id: 'MonetaryAmount' });
export const budgetInput = z.strictObject({ type: z.literal('limit'), max_list_cost: monetaryAmount }).meta({ id: 'BudgetLimit' });

export const metadataInput = z.record(z.string().max(256), z.unknown()).describe('Client metadata (free-form)');

export const createSessionBody = z
  .strictObject({
    agent: z.string().min(1).max(128).describe('The agent id'),
    llm: z.string().min(1).max(200).optional().describe("Default: the agent's model"),
    reasoningEffort: reasoningEffort.nullish().describe("Omitted or null inherits the agent's"),
    title: z.string().max(120).nullish(),
    metadata: metadataInput.optional(),
    instructions: z.array(instructionFile).max(20).optional(),
    initial_events: initialEvents(0)
      .optional()
      .describe("All or nothing; a non-empty list starts the first turn; at most one user.define_outcome (its outcome is the first turn's)"),
    environment_id: z.string().min(1).max(128).optional(),
    vault_ids: z
      .array(z.string().min(1).max(128))
      .max(10)
      .optional()
      .describe('Vaults whose credentials the egress proxy injects (404 not_found for an id that is not a vault of the universe)'),
    vcpus: z.int32().min(1).max(64).optional(),
    memoryMb: z.int32().min(128).max(262_144).optional(),
    modelBilling: modelBilling.optional().describe('Omitted: a connected subscription set for new agents applies'),
    budget: budgetInput.optional().describe('Attachable only at create'),
    resources: z.array(resourceInput).max(100).optional(),
  })
  .meta({ id: 'CreateSessionInput' });
export type CreateSessionBody = z.output<typeof createSessionBody>;

export const patchSessionBody = z
  .strictObject({
    title: z.string().max(120).nullable().optional(),
    metadata: metadataInput.optional().describe('Key-merged; a null value deletes a key'),
    llm: z.string().min(1).max(200).optional(),
    reasoningEffort: reasoningEffort.nullable().optional(),
    modelBilling: modelBilling.optional(),
    budget: budgetInput.nullable().optional().describe('A cap strictly above the consumed cost, or null to remove (one-way)'),
  })
  .meta({ id: 'UpdateSessionInput' });
export type PatchSessionBody = z.output<typeof patchSessionBody>;

const money = z.strictObject({ amount: z.string(), currency: z.literal('USD') }).meta({ id: 'Money' });
export const sessionBudget = z
  .strictObject({
    max_list_cost: money,
    consumed_cost: money,
    reached: z.boolean(),
    reached_at: dateTime(z.string()).nullable(),
  })
  .meta({ id: 'SessionBudget' });

/** Beyond the spec (issue #31): the session's totals; `cost` equals the budget's consumed_cost. */
export const sessionUsage = z
  .strictObject(usageCounters)
  .describe("Beyond the spec: the session's model and tool usage so far (cost = the consumed list cost)")
  .meta({ id: 'SessionUsage' });

export const sessionForkedFrom = z
  .strictObject({
    session_id: z.string().describe('The session this one was forked from'),
    event_id: z.string().nullable().describe("The source's last event copied into this session's history (null: forked before any)"),
  })
  .meta({ id: 'SessionForkedFrom' });

export const forkSessionBody = z
  .strictObject({
    at_event_id: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe(
        "The source's event the copied history ends with (included). Default: the end of its last completed turn. 404 not_found when the event is not in the session; 400 session_running when it is part of the running turn",
      ),
    title: z.string().max(120).nullish().describe("Default: the source's title"),
    budget: budgetInput.optional().describe("A cap for the fork (the source's budget and consumed cost are not carried over)"),
  })
  .meta({ id: 'ForkSessionInput' });
export type ForkSessionBody = z.output<typeof forkSessionBody>;

export const sessionBody = z
  .strictObject({
    id: z.string(),
    agentId: z.string().nullable(),
    title: z.string().nullable(),
    status: sessionStatus,
    agentType: z.string(),
    llm: z.string(),
    reasoningEffort: z.string().nullable().describe("Effective: the session's own setting, else the agent's, else null"),
    modelBilling,
    default: z.boolean().describe("Whether this is the agent's default session"),
    metadata: z.record(z.string(), z.unknown()),
    budget: sessionBudget.nullable(),
    resources: z.array(sessionResource).describe('Oldest first'),
    usage: sessionUsage,
    forked_from: sessionForkedFrom.nullable().describe('Set on a session made by POST /sessions/{id}/fork'),
    createdAt: dateTime(z.string()),
  })
  .meta({ id: 'Session' });
export type SessionView = z.output<typeof sessionBody>;

export const interruptBody = z
  .strictObject({
    status: z
      .enum(['interrupting', 'no_turn'])
      .meta({ id: 'InterruptStatus' })
      .describe('interrupting: the turn stops and an idle event follows; no_turn: nothing was running'),
  })
  .meta({ id: 'InterruptResult' });

// ---- outcomes (issue #33): GET /sessions/{id}/outcomes and …/outcomes/{outcome_id} ----
export const outcomeStatus = z
  .enum(['active', 'satisfied', 'failed', 'max_iterations_reached', 'interrupted'])
  .meta({ id: 'OutcomeStatus' })
  .describe('interrupted: an interrupt, the budget, a failed turn or a lost process stopped the work before a final verdict');
export const outcomeEvaluation = z
  .strictObject({
    iteration: z.int32().min(1),
    turn: z.int32().describe('The agent turn graded'),
    result: evaluationResult,
    criteria: z.array(outcomeCriterion),
    summary: z.string(),
    started_at: dateTime(z.string()),
    ended_at: dateTime(z.string()),
  })
  .meta({ id: 'OutcomeEvaluation' });
export const outcomeBody = z
  .strictObject({
    id: z.string(),
    session_id: z.string(),
    description: z.string(),
    rubric: z.string(),
    max_iterations: z.int32(),
    grader_llm: z.string().nullable(),
    status: outcomeStatus,
    iterations: z.int32().describe('Evaluations finished'),
    evaluations: z.array(outcomeEvaluation).describe('Oldest first'),
    created_at: dateTime(z.string()),
    ended_at: dateTime(z.string()).nullable(),
  })
  .meta({ id: 'Outcome' });
export type OutcomeView = z.output<typeof outcomeBody>;
export const outcomePage = z.strictObject({ data: z.array(outcomeBody), next_page: z.string().nullable() }).meta({ id: 'OutcomePage' });
