// Property-based requests for every query and mutation field of the GraphQL schema, built from
// the schema itself: arguments generated from their input types (enums, input objects, lists,
// ids of real rows, hostile strings, negative and 32-bit-overflowing integers, nulls where the
// type allows), sent as variables over /graphql with a selection of the field's scalar fields
// (connections: their edges' cursors and nodes' scalars). For every answer: no 5xx, a GraphQL
// response (`data` and/or `errors`, each error with a string message and, where present, a code
// of the error table), and no error masked as internal_error. Fixed seed and FUZZ_RUNS (6) per field
// in CI; `npm run fuzz` runs 40 with a new seed (a failure names its seed to replay).
import fc from 'fast-check';
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { schema } from '../../src/graphql/schema.js';
import { isErrorCode } from '../../src/errors.js';

const SEED = Number(process.env.FUZZ_SEED || 20261128);
const RUNS = Number(process.env.FUZZ_RUNS || 6);
const PARALLEL = 4;
/** Fields whose effects would end the run for every other field (the caller's own sign-in). */
const SKIPPED = new Set(['revokeApiToken', 'signOut', 'logout']);

let s: TestServer;
const ids: string[] = [];

beforeAll(async () => {
  s = await startTestServer();
  const agent = (await s.api('POST', '/agents', { body: { displayName: 'GraphQL fuzz' } })).body.agent;
  const session = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session;
  const routine = (
    await s.api('POST', '/routines', {
      body: {
        name: 'fuzz',
        target: { type: 'new_session', agent: agent.id },
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'x' }] }],
      },
    })
  ).body;
  const vault = (await s.api('POST', '/vaults', { body: { name: 'fuzz' } })).body;
  const environment = (await s.api('POST', '/environments', { body: { name: 'fuzz' } })).body;
  ids.push(agent.id, session.id, routine.id, vault.id, environment.id, (await s.api('GET', '/whoami')).body.universe.slug);
  expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
});
afterAll(async () => {
  await s?.stop();
});

const HOSTILE = [
  '',
  ' ',
  'a\u0000b',
  'x\ud800y',
  '__proto__',
  "' OR 1=1 --",
  '../../etc/passwd',
  'agent_01aaaaaaaaaaaaaaaaaaaaaaaa',
  'h'.repeat(5000),
  '{"a":1}',
  'https://example.com/x',
];
const INTS = [-1, 0, 1, 2, 100, 2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 1.5];

/**
 * Values of an input type. `typed`: every value has its declared type (non-null where required,
 * ints within 32 bits, enum members), so the request reaches the resolver and its own rules;
 * otherwise any value may be of the wrong type, so GraphQL's coercion refuses it (400).
 */
function inputArbitrary(type: GraphQLInputType, typed: boolean, depth = 0): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return nullableArbitrary(type.ofType as GraphQLInputType, typed, depth);
  const inner = nullableArbitrary(type, typed, depth);
  return fc.oneof({ weight: 5, arbitrary: inner }, { weight: 1, arbitrary: fc.constant(typed ? undefined : null) });
}

function nullableArbitrary(type: GraphQLInputType, typed: boolean, depth: number): fc.Arbitrary<unknown> {
  const t = getNullableType(type) as GraphQLInputType;
  const wrong = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<unknown>, weight = 6) =>
    typed ? good : fc.oneof({ weight, arbitrary: good }, { weight: 1, arbitrary: bad });
  if (isListType(t)) return depth > 4 ? fc.constant([]) : fc.array(inputArbitrary(t.ofType as GraphQLInputType, typed, depth + 1), { maxLength: 3 });
  if (isEnumType(t)) return wrong(fc.constantFrom(...t.getValues().map((v) => v.name)), fc.constant('NOT_A_VALUE'));
  if (isInputObjectType(t)) {
    if (depth > 4) return fc.constant({});
    const fields = Object.values(t.getFields());
    // @oneOf inputs take exactly one field
    if (t.isOneOf) return fc.constantFrom(...fields).chain((f) => nullableArbitrary(f.type, typed, depth + 1).map((v) => ({ [f.name]: v })));
    return fc.record(Object.fromEntries(fields.map((f) => [f.name, inputArbitrary(f.type, typed, depth + 1)])), {
      requiredKeys: fields.filter((f) => isNonNullType(f.type)).map((f) => f.name),
    });
  }
  if (isScalarType(t)) {
    switch (t.name) {
      case 'Int':
        return fc.oneof(fc.integer({ min: -3, max: 50 }), fc.constantFrom(...INTS.filter((n) => !typed || (Number.isInteger(n) && Math.abs(n) < 2 ** 31))));
      case 'Float':
        return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }), fc.constantFrom(-1, 0, 1e300));
      case 'Boolean':
        return wrong(fc.boolean(), fc.constant('yes'));
      case 'DateTime':
        return wrong(
          fc.date({ noInvalidDate: true, min: new Date('2000-01-01'), max: new Date('2100-01-01') }).map((d) => d.toISOString()),
          fc.constantFrom('not a date', ''),
        );
      case 'JSON':
        return fc.jsonValue({ maxDepth: 2 });
      default: // String, ID and other string-like scalars
        return wrong(
          fc.oneof(
            { weight: 4, arbitrary: fc.constantFrom(...ids) },
            { weight: 3, arbitrary: fc.constantFrom(...HOSTILE) },
            { weight: 3, arbitrary: fc.string({ maxLength: 16 }) },
          ),
          fc.constantFrom<unknown>(12, true, { a: 1 }),
          10,
        );
    }
  }
  return fc.jsonValue({ maxDepth: 2 });
}

/** The scalar fields (no required arguments) of an object type, or of a connection's nodes. */
function selectionOf(named: GraphQLNamedType, depth = 0): string {
  if (isLeafType(named)) return '';
  if (isUnionType(named) || depth > 2) return '{ __typename }';
  if (!isObjectType(named) && !isInterfaceType(named)) return '{ __typename }';
  const fields = Object.values((named as GraphQLObjectType).getFields()).filter((f) => f.args.every((a) => !isNonNullType(a.type)));
  const parts = ['__typename'];
  for (const f of fields) {
    const inner = getNamedType(f.type);
    if (isLeafType(inner)) parts.push(f.name);
    else if (f.name === 'edges' || f.name === 'node' || f.name === 'pageInfo') parts.push(`${f.name} ${selectionOf(inner, depth + 1)}`);
  }
  return `{ ${parts.slice(0, 24).join(' ')} }`;
}

function documentFor(kind: 'query' | 'mutation', field: GraphQLField<unknown, unknown>): string {
  const vars = field.args.map((a, i) => `$a${i}: ${String(a.type)}`);
  const args = field.args.map((a, i) => `${a.name}: $a${i}`);
  return `${kind} Fuzz${vars.length ? `(${vars.join(', ')})` : ''} { ${field.name}${args.length ? `(${args.join(', ')})` : ''} ${selectionOf(getNamedType(field.type))} }`;
}

/** Why a /graphql answer breaks the rules, or null. */
function graphqlProblem(status: number, text: string): string | null {
  // the one 5xx the spec names: 501 coming_soon (an imessage channel app or connection)
  const comingSoon = status === 501 && text.includes('"code":"coming_soon"');
  if (status >= 500 && !comingSoon) return `status ${status}: ${text.slice(0, 300)}`;
  let body: { data?: unknown; errors?: { message?: unknown; extensions?: { code?: unknown } }[] };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return `status ${status} with a body that is not JSON: ${text.slice(0, 200)}`;
  }
  if (!body || typeof body !== 'object' || (!('data' in body) && !('errors' in body))) return `not a GraphQL response: ${text.slice(0, 200)}`;
  if (status >= 400 && !body.errors?.length) return `status ${status} without errors: ${text.slice(0, 200)}`;
  for (const error of body.errors ?? []) {
    if (typeof error.message !== 'string') return `an error without a message: ${JSON.stringify(error).slice(0, 200)}`;
    const code = error.extensions?.code;
    if (code === 'internal_error') return `an error masked as internal_error (a bug, not the caller's mistake): ${text.slice(0, 300)}`;
    if (code !== undefined && typeof code !== 'string') return `an error code that is not a string: ${JSON.stringify(error).slice(0, 200)}`;
    if (typeof code === 'string' && !isErrorCode(code) && !/^[A-Z_]+$/.test(code)) return `an unknown error code ${code}`;
  }
  return null;
}

describe('requests generated from the GraphQL schema', () => {
  it(
    `every query and mutation field × ${RUNS} generated requests: no 5xx, GraphQL's error shape, nothing masked`,
    async () => {
      const fields = [
        ...Object.values(schema.getQueryType()!.getFields()).map((f) => ['query', f] as const),
        ...Object.values(schema.getMutationType()!.getFields()).map((f) => ['mutation', f] as const),
      ].filter(([, f]) => !SKIPPED.has(f.name));
      expect(fields.length).toBeGreaterThan(100);
      // queries first, then mutations (deletes last), so reads meet rows before they are removed
      const queue = [...fields].sort((a, b) =>
        a[0] === b[0] ? Number(/^delete/.test(a[1].name)) - Number(/^delete/.test(b[1].name)) : a[0] === 'query' ? -1 : 1,
      );
      const failures: string[] = [];
      const statuses = new Map<number, number>();
      let index = 0;
      const worker = async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          const [kind, field] = next;
          const seed = SEED + index++;
          const query = documentFor(kind, field);
          // two in three requests well-typed (they reach the resolvers), the rest free-typed
          const typed = fc.oneof({ weight: 2, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });
          const variables = typed
            .chain((t) => fc.tuple(...field.args.map((a) => inputArbitrary(a.type, t))))
            .map((values) => Object.fromEntries(values.map((v, i) => [`a${i}`, v])));
          const run = await fc.check(
            fc.asyncProperty(field.args.length ? variables : fc.constant({}), async (vars) => {
              const res = await fetch(`${s.url}/graphql`, {
                method: 'POST',
                headers: {
                  authorization: `Bearer ${s.adminToken}`,
                  'content-type': 'application/json',
                  accept: 'application/graphql-response+json, application/json',
                },
                body: JSON.stringify({ query, variables: vars }),
              });
              const text = await res.text();
              statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
              const problem = graphqlProblem(res.status, text);
              if (problem) throw new Error(`${problem}\n  ${query}\n  variables: ${JSON.stringify(vars).slice(0, 400)}`);
            }),
            { seed, numRuns: RUNS, endOnFailure: true },
          );
          if (run.failed)
            failures.push(
              `${kind} ${field.name} (seed ${seed}): ${run.errorInstance instanceof Error ? run.errorInstance.message : String(run.errorInstance)}`,
            );
        }
      };
      await Promise.all(Array.from({ length: PARALLEL }, worker));
      if (process.env.FUZZ_VERBOSE) console.log(Object.fromEntries(statuses));
      expect(failures, failures.join('\n\n')).toEqual([]);
      // both sides reached: answers with data and refusals of the caller's mistakes
      expect(statuses.get(200) ?? 0).toBeGreaterThan(fields.length / 4);
      expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
    },
    Math.max(300_000, RUNS * 20_000),
  );
});
