// Shared response shapes for the OpenAPI document.
import { z } from 'zod';

export const ErrorEnvelope = z.object({ error: z.object({ code: z.string(), message: z.string() }) }).meta({ id: 'Error' });

export const Ok = z.object({ ok: z.literal(true) }).meta({ id: 'Ok' });

export const Timestamp = z.string().describe('ISO 8601 timestamp');

export const UniverseBody = z.object({ slug: z.string(), name: z.string(), isPersonal: z.boolean(), createdAt: Timestamp }).meta({ id: 'Universe' });

export const WhoamiBody = z
  .object({
    user: z.object({ id: z.string(), email: z.string(), name: z.string().nullable() }),
    universe: z.object({ slug: z.string(), name: z.string(), isPersonal: z.boolean() }),
    scopes: z.array(z.enum(['read', 'write', 'admin'])),
    auth: z.enum(['token', 'session']),
  })
  .meta({ id: 'Whoami' });
