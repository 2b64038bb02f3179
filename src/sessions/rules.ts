// Session create / patch bodies with the spec's limits.
import { z } from 'zod';
import { userMessageEvent } from './content.js';
import { resourceInput } from '../resources/rules.js';

export const REASONING_EFFORT_VALUES = ['none', 'off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max', 'ultra'] as const;

const instructionFile = z.strictObject({
  name: z.string().min(1).regex(/.*\.md$/, 'must end in .md'),
  content: z.string().max(100_000).default(''),
});

export const monetaryAmount = z.strictObject({
  amount: z.string().regex(/^[0-9]{1,15}$/, 'whole US cents as digits (1 to 15 characters)'),
  currency: z.literal('USD'),
});
export const budgetInput = z.strictObject({ type: z.literal('limit'), max_list_cost: monetaryAmount });

const metadata = z.record(z.string().max(256), z.unknown());

export const createSessionBody = z.strictObject({
  agent: z.string().min(1).max(128),
  llm: z.string().min(1).max(200).optional(),
  reasoningEffort: z.enum(REASONING_EFFORT_VALUES).nullish(),
  title: z.string().max(120).nullish(),
  metadata: metadata.optional(),
  instructions: z.array(instructionFile).max(20).optional(),
  initial_events: z.array(userMessageEvent).max(50).optional(),
  environment_id: z.string().min(1).max(128).optional(),
  vault_ids: z.array(z.string().min(1).max(128)).max(10).optional(),
  vcpus: z.number().int().min(1).max(64).optional(),
  memoryMb: z.number().int().min(128).max(262_144).optional(),
  modelBilling: z.enum(['platform', 'account']).optional(),
  budget: budgetInput.optional(),
  resources: z.array(resourceInput).max(100).optional(),
});
export type CreateSessionBody = z.infer<typeof createSessionBody>;

export const patchSessionBody = z.strictObject({
  title: z.string().max(120).nullable().optional(),
  metadata: metadata.optional(),
  llm: z.string().min(1).max(200).optional(),
  reasoningEffort: z.enum(REASONING_EFFORT_VALUES).nullable().optional(),
  modelBilling: z.enum(['platform', 'account']).optional(),
  budget: budgetInput.nullable().optional(),
});
export type PatchSessionBody = z.infer<typeof patchSessionBody>;
