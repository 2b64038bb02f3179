// /whoami and /universes.
import { z } from 'zod';
import { defineRoute } from '../route.js';
import { UniverseBody, WhoamiBody } from '../schemas.js';
import { createUniverseSchema } from '../../src/universes/universes.js';

const UNIVERSE_FIELDS = 'slug name isPersonal createdAt';

export const identityRoutes = [
  defineRoute({
    method: 'GET', path: '/whoami', operationId: 'getWhoami', tag: 'Identity', scope: 'read',
    summary: 'Who the caller is: user, universe, scopes and auth kind',
    document: `query Whoami { whoami { user { id email name } universe { slug name isPersonal } scopes auth } }`,
    result: (d) => d.whoami,
    response: WhoamiBody,
  }),
  defineRoute({
    method: 'GET', path: '/universes', operationId: 'listUniverses', tag: 'Universes', scope: 'read',
    summary: 'Universes the caller can act in',
    document: `query Universes { universes { ${UNIVERSE_FIELDS} } }`,
    result: (d) => ({ universes: d.universes }),
    response: z.object({ universes: z.array(UniverseBody) }),
  }),
  defineRoute({
    method: 'POST', path: '/universes', operationId: 'createUniverse', tag: 'Universes', scope: 'write',
    note: 'Personal tokens only (a universe-scoped token gets 403 forbidden).',
    summary: 'Create a universe',
    body: createUniverseSchema,
    document: `mutation CreateUniverse($input: CreateUniverseInput!) { createUniverse(input: $input) { ${UNIVERSE_FIELDS} } }`,
    variables: ({ body }) => ({ input: body }),
    result: (d) => ({ universe: d.createUniverse }),
    status: 201,
    idempotent: true,
    response: z.object({ universe: UniverseBody }),
    errors: ['invalid_request', 'forbidden', 'conflict'],
  }),
  defineRoute({
    method: 'GET', path: '/universes/{slug}', operationId: 'getUniverse', tag: 'Universes', scope: 'read',
    summary: 'One universe by slug',
    document: `query Universe($slug: String!) { universe(slug: $slug) { ${UNIVERSE_FIELDS} } }`,
    variables: ({ params }) => ({ slug: params.slug }),
    result: (d) => ({ universe: d.universe }),
    response: z.object({ universe: UniverseBody }),
    errors: ['not_found'],
  }),
];
