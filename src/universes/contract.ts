// Identity as the spec shows it: the universe and the whoami answer. One definition each for
// the REST answers, OpenAPI and the GraphQL types.
import { z } from 'zod';
import { dateTime } from '../contract/zod-walk.js';
import { SCOPES } from '../auth/scopes.js';

export const scope = z.enum(SCOPES).meta({ id: 'Scope' });
export const authKind = z.enum(['token', 'session']).meta({ id: 'AuthKind' });

export const universeBody = z
  .strictObject({
    slug: z.string(),
    name: z.string(),
    isPersonal: z.boolean(),
    createdAt: dateTime(z.string()),
  })
  .meta({ id: 'Universe' });
export type UniverseView = z.output<typeof universeBody>;

export const whoamiBody = z
  .strictObject({
    user: z.strictObject({ id: z.string(), email: z.string(), name: z.string().nullable() }).meta({ id: 'WhoamiUser' }),
    universe: z.strictObject({ slug: z.string(), name: z.string(), isPersonal: z.boolean() }).meta({ id: 'WhoamiUniverse' }),
    scopes: z.array(scope),
    auth: authKind.describe('token: a bearer token; session: a signed-in browser'),
  })
  .meta({ id: 'Whoami' });

export const universeAnswer = z.strictObject({ universe: universeBody }).meta({ id: 'UniverseAnswer' });
export const universeList = z.strictObject({ universes: z.array(universeBody).describe('Personal first, then oldest first') }).meta({ id: 'UniverseList' });
