// /whoami and /universes. Answers are the zod schemas of src/universes/contract.ts; documents
// alias their root field to the answer's key.
import { defineRoute } from '../route.js';
import { createUniverseSchema } from '../../src/universes/universes.js';
import { universeBody, whoamiBody, universeAnswer, universeList } from '../../src/universes/contract.js';
import { selectionOf } from '../../src/contract/values.js';

const UNIVERSE = selectionOf(universeBody);

export const identityRoutes = [
  defineRoute({
    method: 'GET',
    path: '/whoami',
    operationId: 'getWhoami',
    tag: 'Identity',
    scope: 'read',
    summary: 'Who the caller is: user, universe, scopes and auth kind',
    document: `query Whoami { whoami { ${selectionOf(whoamiBody)} } }`,
    pick: (data) => data.whoami,
    response: whoamiBody,
  }),
  defineRoute({
    method: 'GET',
    path: '/universes',
    operationId: 'listUniverses',
    tag: 'Universes',
    scope: 'read',
    summary: 'Universes the caller can act in',
    document: `query Universes { universes { ${UNIVERSE} } }`,
    response: universeList,
  }),
  defineRoute({
    method: 'POST',
    path: '/universes',
    operationId: 'createUniverse',
    tag: 'Universes',
    scope: 'write',
    note: 'Personal tokens only (a universe-scoped token gets 403 forbidden).',
    summary: 'Create a universe',
    body: createUniverseSchema,
    document: `mutation CreateUniverse($input: CreateUniverseInput!) { universe: createUniverse(input: $input) { ${UNIVERSE} } }`,
    status: 201,
    idempotent: true,
    response: universeAnswer,
    errors: ['invalid_request', 'forbidden', 'conflict'],
  }),
  defineRoute({
    method: 'GET',
    path: '/universes/{slug}',
    operationId: 'getUniverse',
    tag: 'Universes',
    scope: 'read',
    summary: 'One universe by slug',
    document: `query Universe($slug: String!) { universe(slug: $slug) { ${UNIVERSE} } }`,
    response: universeAnswer,
    errors: ['not_found'],
  }),
];
