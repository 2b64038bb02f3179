// The GraphQL surface is typed: no `JSONObject` scalar in the checked-in schema.graphql nor in
// the schema the service serves. A failure lists every field and argument still using it.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSchema, getNamedType, isInputObjectType, isInterfaceType, isObjectType, printSchema, type GraphQLSchema } from 'graphql';
import { schema } from '../../src/graphql/schema.js';

const UNTYPED = 'JSONObject';

/** `Type.field`, `Type.field(arg)` and `Input.field` whose type is the untyped scalar. */
function untypedUses(s: GraphQLSchema): string[] {
  const uses: string[] = [];
  for (const type of Object.values(s.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (getNamedType(field.type).name === UNTYPED) uses.push(`${type.name}.${field.name}`);
        for (const arg of field.args) if (getNamedType(arg.type).name === UNTYPED) uses.push(`${type.name}.${field.name}(${arg.name})`);
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) if (getNamedType(field.type).name === UNTYPED) uses.push(`${type.name}.${field.name}`);
    }
  }
  return uses.sort();
}

describe('typed GraphQL schema', () => {
  it(`the served schema has no ${UNTYPED} scalar`, () => {
    expect(untypedUses(schema), `fields and arguments typed ${UNTYPED}`).toEqual([]);
    expect(printSchema(schema)).not.toMatch(new RegExp(`\\b${UNTYPED}\\b`));
  });

  it(`schema.graphql has no ${UNTYPED} scalar`, () => {
    const sdl = fs.readFileSync(path.resolve(import.meta.dirname, '../../schema.graphql'), 'utf8');
    expect(untypedUses(buildSchema(sdl)), `fields and arguments typed ${UNTYPED} in schema.graphql`).toEqual([]);
    expect(sdl).not.toMatch(new RegExp(`\\b${UNTYPED}\\b`));
  });
});
