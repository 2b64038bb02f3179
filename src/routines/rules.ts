// Routine create / patch bodies with the spec's limits.
import { z } from 'zod';
import { userMessageEvent } from '../sessions/content.js';
import { budgetInput } from '../sessions/contract.js';

const metadata = z.record(z.string().min(1).max(64), z.string().max(512));
const metadataPatch = z.record(z.string().min(1).max(64), z.string().max(512).nullable());

export const routineTarget = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('new_session'),
    agent: z.string().min(1).max(128),
    environment_id: z.string().min(1).max(128).optional(),
    vault_ids: z.array(z.string().min(1).max(128)).max(10).optional(),
  }),
  z.strictObject({ type: z.literal('session'), session_id: z.string().min(1).max(128) }),
]);

export const cronSchedule = z.strictObject({
  type: z.literal('cron'),
  expression: z.string().min(1).max(256),
  timezone: z.string().min(1).max(64).default('UTC'),
});

export const createRoutineBody = z.strictObject({
  name: z.string().min(1).max(256),
  description: z.string().max(2048).nullish(),
  metadata: metadata.optional(),
  target: routineTarget,
  initial_events: z.array(userMessageEvent).min(1).max(50),
  schedule: cronSchedule.nullish(),
  budget: budgetInput.nullish(),
});
export type CreateRoutineBody = z.infer<typeof createRoutineBody>;

export const patchRoutineBody = z.strictObject({
  name: z.string().min(1).max(256).optional(),
  description: z.string().max(2048).nullable().optional(),
  metadata: metadataPatch.optional(),
  target: routineTarget.optional(),
  initial_events: z.array(userMessageEvent).min(1).max(50).optional(),
  schedule: cronSchedule.nullable().optional(),
  budget: budgetInput.nullable().optional(),
});

export const ROUTINE_ERROR_TYPES = [
  'agent_archived_error', 'agent_not_found_error', 'session_archived_error', 'session_not_found_error', 'session_busy_error',
  'environment_archived_error', 'environment_not_found_error', 'vault_not_found_error', 'insufficient_credits_error',
  'rate_limited_error', 'run_rejected_error', 'unknown_error',
] as const;
export type RoutineErrorType = (typeof ROUTINE_ERROR_TYPES)[number];

/** These leave the routine active; every other error pauses it. */
export const TRANSIENT_ERRORS = new Set<RoutineErrorType>(['insufficient_credits_error', 'rate_limited_error', 'session_busy_error']);
