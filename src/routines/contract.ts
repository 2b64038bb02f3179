// Routines: the create/patch bodies, the routine and its runs as returned, with the spec's
// limits. One definition each for REST validation, OpenAPI, the GraphQL types and the domain.
import { z } from 'zod';
import { dateTime } from '../contract/zod-walk.js';
import { contentBlock, initialEvents as initialEventsOf } from '../events/content.js';
import { budgetInput } from '../sessions/contract.js';
import { connectionCursor } from '../pagination/page-token.js';
import { memoryStoreResourceInput } from '../resources/contract.js';
import { MAX_STORES_PER_SESSION } from '../memory/paths.js';

const ROUTINE_ERROR_TYPES = [
  'agent_archived_error',
  'agent_not_found_error',
  'session_archived_error',
  'session_not_found_error',
  'session_busy_error',
  'environment_archived_error',
  'environment_not_found_error',
  'vault_not_found_error',
  'insufficient_credits_error',
  'rate_limited_error',
  'run_rejected_error',
  'unknown_error',
] as const;
const routineErrorType = z.enum(ROUTINE_ERROR_TYPES).meta({ id: 'RoutineErrorType' });
export type RoutineErrorType = z.output<typeof routineErrorType>;
const routineStatus = z.enum(['active', 'paused']).meta({ id: 'RoutineStatus' });

const metadataKey = z.string().min(1).max(64);
const metadata = z.record(metadataKey, z.string().max(512)).describe('String values; keys 1 to 64, values at most 512 characters');
const metadataPatch = z.record(metadataKey, z.string().max(512).nullable()).describe('Key-merged; a null value deletes a key');

// A memory store each fire's session mounts: the session resource's fields, without the default
// of `access` (filled in when the routine is saved, so the stored target always names it).
const routineMemoryStore = memoryStoreResourceInput
  .omit({ type: true })
  .extend({ access: memoryStoreResourceInput.shape.access.removeDefault().optional().describe('read_only: the jail refuses writes (default read_write)') })
  .meta({ id: 'RoutineMemoryStore', description: "Mounted into each fire's new session as a memory_store resource" });

// Targets and the stored budget have no defaults: one schema serves input and output alike.
const newSessionTarget = z
  .strictObject({
    type: z.literal('new_session'),
    agent: z.string().min(1).max(128).describe('The agent id'),
    environment_id: z.string().min(1).max(128).optional(),
    vault_ids: z.array(z.string().min(1).max(128)).max(10).optional(),
    memory_stores: z
      .array(routineMemoryStore)
      .max(MAX_STORES_PER_SESSION)
      .optional()
      .describe('Each store once; checked when saved (404 unknown, 409 archived) and again at each fire (then run_rejected_error)'),
  })
  .meta({ id: 'NewSessionTarget', description: 'A fresh session per fire' });
const sessionTarget = z
  .strictObject({
    type: z.literal('session'),
    session_id: z.string().min(1).max(128),
  })
  .meta({ id: 'SessionTarget', description: 'A turn into this session on every fire (a busy session skips with session_busy_error)' });
const routineTarget = z.discriminatedUnion('type', [newSessionTarget, sessionTarget]).meta({ id: 'RoutineTarget' });
export type RoutineTarget = z.output<typeof routineTarget>;

const cronScheduleInput = z
  .strictObject({
    type: z.literal('cron'),
    // five fields, as the document says (the values of each field are checked by cron.ts)
    expression: z
      .string()
      .min(1)
      .max(256)
      .regex(/^\s*\S+(\s+\S+){4}\s*$/, 'must have 5 fields (minute hour day-of-month month day-of-week)')
      .describe('5-field POSIX cron, wall-clock, minute granularity'),
    timezone: z.string().min(1).max(64).default('UTC').describe('IANA time zone (default UTC)'),
  })
  .meta({ id: 'CronScheduleInput' });

const initialEvents = initialEventsOf(1);

export const createRoutineBody = z
  .strictObject({
    name: z.string().min(1).max(256),
    description: z.string().max(2048).nullish(),
    metadata: metadata.optional(),
    target: routineTarget,
    initial_events: initialEvents,
    schedule: cronScheduleInput.nullish().describe('null or omitted: manual runs only'),
    budget: budgetInput
      .nullish()
      .describe(
        "Per-run cap: copied onto each new session (target new_session); for target session, an allowance on top of the cost the session has consumed when the run fires, for that run's turn only (the session's own budget is never changed)",
      ),
  })
  .meta({ id: 'CreateRoutineInput' });
export type CreateRoutineBody = z.output<typeof createRoutineBody>;

export const patchRoutineBody = z
  .strictObject({
    name: z.string().min(1).max(256).optional(),
    description: z.string().max(2048).nullable().optional(),
    metadata: metadataPatch.optional(),
    target: routineTarget.optional(),
    initial_events: initialEvents.optional(),
    schedule: cronScheduleInput.nullable().optional(),
    budget: budgetInput.nullable().optional(),
  })
  .meta({ id: 'UpdateRoutineInput' });
export type PatchRoutineBody = z.output<typeof patchRoutineBody>;

// ---- answers ----

const routineInitialEvent = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('user.message'), content: z.array(contentBlock).min(1) }).meta({ id: 'RoutineInitialEvent' }),
    z
      .strictObject({
        type: z.literal('user.define_outcome'),
        description: z.string(),
        rubric: z.string(),
        max_iterations: z.int32(),
        grader_llm: z.string().nullish(),
      })
      .meta({ id: 'RoutineInitialOutcome' }),
  ])
  .meta({ id: 'RoutineInitialEventItem' });

const routineSchedule = z
  .strictObject({
    type: z.literal('cron'),
    expression: z.string(),
    timezone: z.string(),
    last_run_at: dateTime(z.string()).nullable(),
    upcoming_runs_at: z.array(dateTime(z.string())).max(5).describe('At most 5; empty once archived or while paused'),
  })
  .meta({ id: 'RoutineSchedule' });

const pausedManually = z.strictObject({ type: z.literal('manual') }).meta({ id: 'RoutinePausedManually' });
const pausedByError = z
  .strictObject({
    type: z.literal('error'),
    error: z.strictObject({ type: routineErrorType }).meta({ id: 'RoutinePauseError' }),
  })
  .meta({ id: 'RoutinePausedByError' });
export const pausedReason = z.discriminatedUnion('type', [pausedManually, pausedByError]).meta({ id: 'RoutinePausedReason' });
export type PausedReason = z.output<typeof pausedReason>;

export const routineBody = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    target: routineTarget,
    initial_events: z.array(routineInitialEvent),
    schedule: routineSchedule.nullable().describe('null: manual runs only'),
    budget: budgetInput
      .nullable()
      .describe(
        "Per-run cap: copied onto each new session (target new_session); for target session, an allowance on top of the cost the session has consumed when the run fires, for that run's turn only (the session's own budget is never changed)",
      ),
    status: routineStatus,
    paused_reason: pausedReason.nullable().describe('Non-null exactly when paused'),
    archived_at: dateTime(z.string()).nullable(),
    created_at: dateTime(z.string()),
    updated_at: dateTime(z.string()),
  })
  .meta({ id: 'Routine' });
export type RoutineView = z.output<typeof routineBody>;

const scheduleTrigger = z.strictObject({ type: z.literal('schedule'), scheduled_at: dateTime(z.string()) }).meta({ id: 'ScheduleTrigger' });
const manualTrigger = z.strictObject({ type: z.literal('manual') }).meta({ id: 'ManualTrigger' });
const triggerContext = z.discriminatedUnion('type', [scheduleTrigger, manualTrigger]).meta({ id: 'RoutineTriggerContext' });

const routineRunAgent = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    version: z.int32().describe('The agent version at fire time'),
  })
  .meta({ id: 'RoutineRunAgent', description: 'The agent the fire resolved' });
export type RoutineRunAgent = z.output<typeof routineRunAgent>;

export const routineRunBody = z
  .strictObject({
    id: z.string(),
    routine_id: z.string(),
    trigger_context: triggerContext,
    session_id: z.string().nullable(),
    error: z.strictObject({ type: routineErrorType, message: z.string() }).meta({ id: 'RoutineRunError' }).nullable(),
    agent: routineRunAgent.nullable(),
    outcome: z
      .strictObject({ id: z.string(), status: z.string().describe('active while it runs; then satisfied, failed, max_iterations_reached or interrupted') })
      .meta({ id: 'RoutineRunOutcome' })
      .nullable()
      .describe("The outcome the run's initial_events defined, with its current (finally its final) status; null without one"),
    created_at: dateTime(z.string()),
  })
  .meta({ id: 'RoutineRun', description: 'One fire attempt: exactly one of session_id and error is non-null' });
export type RoutineRunView = z.output<typeof routineRunBody>;

// Paged like GET /files (snake_case: `limit`, `page` ← `next_page`); the default keeps a plain GET
// answering up to 1000 at once.
const nextPage = z.string().nullable().describe('Pass back as ?page= for the next page; null on the last page');
export const routineList = z.strictObject({ data: z.array(routineBody).describe('Newest first'), next_page: nextPage }).meta({ id: 'RoutineList' });
export const routineRunList = z.strictObject({ data: z.array(routineRunBody).describe('Newest first'), next_page: nextPage }).meta({ id: 'RoutineRunList' });
export const listRoutinesQuery = (prefix: 'rtn' | 'rrun') =>
  z.strictObject({
    limit: z.coerce.number().int().min(1).max(1000).default(1000).describe('1 to 1000, default 1000'),
    page: connectionCursor(prefix).optional().describe('the next_page of the previous answer'),
  });

export type NewSessionTargetValue = z.output<typeof newSessionTarget>;
export type SessionTargetValue = z.output<typeof sessionTarget>;
