// Model subscriptions: the put/patch bodies and the subscription as returned, with the spec's
// limits. One definition each for REST validation, OpenAPI, the GraphQL types and the domain.
import { z } from 'zod';
import { dateTime } from '../contract/zod-walk.js';

export const PROVIDERS = ['anthropic', 'openai'] as const;
const subscriptionProvider = z.enum(PROVIDERS).meta({ id: 'ModelProvider' });
const subscriptionStatus = z.enum(['connected', 'needs_reconnect']).meta({ id: 'ModelSubscriptionStatus' });

const label = z.string().max(60);

export const putSubscriptionBody = z
  .strictObject({
    credential: z.string().min(1).max(100_000).describe('Write-only; never returned'),
    label: label.nullish(),
  })
  .meta({ id: 'PutModelSubscriptionInput' });
export type PutSubscriptionBody = z.output<typeof putSubscriptionBody>;

export const patchSubscriptionBody = z
  .strictObject({
    useForNewAgents: z.boolean().optional().describe("New sessions bill to this subscription when their model is this provider's"),
    label: label.nullable().optional(),
  })
  .meta({ id: 'UpdateModelSubscriptionInput' });
export type PatchSubscriptionBody = z.output<typeof patchSubscriptionBody>;

const subscriptionAgent = z
  .strictObject({
    id: z.string().describe('The session id'),
    agentId: z.string().nullable(),
    name: z.string(),
  })
  .meta({ id: 'ModelSubscriptionAgent' });

export const modelSubscriptionBody = z
  .strictObject({
    provider: subscriptionProvider,
    label: z.string().nullable(),
    status: subscriptionStatus,
    expiresAt: dateTime(z.string()).nullable(),
    lastUsedAt: dateTime(z.string()).nullable(),
    useForNewAgents: z.boolean(),
    createdAt: dateTime(z.string()),
    agents: z.array(subscriptionAgent).describe("Sessions of the universe running on it (account billing with this provider's models)"),
  })
  .meta({ id: 'ModelSubscription' });
export type ModelSubscriptionView = z.output<typeof modelSubscriptionBody>;

export const modelSubscriptionList = z.strictObject({ subscriptions: z.array(modelSubscriptionBody) }).meta({ id: 'ModelSubscriptionList' });
