// GraphQL types derived from the zod schemas of the contract: one definition per shape yields
// the REST validation, the OpenAPI schema and (here) the typed GraphQL input or output type.
// Field names are the camelCase of the spec's names; deep unions become @oneOf inputs (one
// field per discriminator value) and GraphQL unions on output. Free-form client data
// (metadata, tool arguments) is the `JSON` scalar.
import type { z } from 'zod';
import type { InputFieldRef, InputRef, ObjectRef, SchemaTypes } from '@pothos/core';
import { builder } from './builder.js';
import {
  dateTimeStrings,
  defOf,
  unwrap,
  isDiscriminatedUnion,
  discriminatorValue,
  graphqlName,
  pascal,
  enumName,
  describe,
  isIntegerSchema,
} from '../contract/zod-walk.js';

// Pothos refs are typed by their TS shape; the derived types are checked at the edges
// (`inputOf`/`objectOf` signatures), so inside this module refs are opaque.
type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : SchemaTypes;
type Obj = Record<string, unknown>;
type FieldRef = InputFieldRef<Types, unknown>;
type AnyInputRef = InputRef<Obj> | string;
type AnyOutputRef = ObjectRef<Types, Obj> | string | ReturnType<typeof builder.unionType> | ReturnType<typeof builder.enumType>;

const enums = new Map<string, { key: string; ref: ReturnType<typeof builder.enumType> }>();
const inputs = new Map<z.ZodType, AnyInputRef>();
const outputs = new Map<z.ZodType, AnyOutputRef>();
const names = new Map<string, z.ZodType>();

function claimName(name: string, schema: z.ZodType): string {
  const owner = names.get(name);
  if (owner && owner !== schema) throw new Error(`GraphQL type name ${name} is derived from two different schemas; give one a .meta({ id })`);
  names.set(name, schema);
  return name;
}

function metaId(schema: z.ZodType): string | undefined {
  const meta = schema.meta() as { id?: string } | undefined;
  return meta?.id;
}

function enumRef(values: string[], name: string) {
  const key = [...values].sort().join('|');
  const existing = enums.get(name);
  if (existing) {
    if (existing.key !== key) throw new Error(`enum ${name} derived twice with different values`);
    return existing.ref;
  }
  const ref = builder.enumType(name, { values: Object.fromEntries(values.map((v) => [enumName(v), { value: v }])) });
  enums.set(name, { key, ref });
  return ref;
}

function scalarFor(core: z.ZodType, schema: z.ZodType): string | undefined {
  const def = defOf(core);
  switch (def.type) {
    case 'string':
      return dateTimeStrings.has(core) || dateTimeStrings.has(schema) ? 'DateTime' : 'String';
    case 'number':
      return isIntegerSchema(core) ? 'Int' : 'Float';
    case 'int':
      return 'Int';
    case 'boolean':
      return 'Boolean';
    case 'bigint':
      return 'String';
    case 'record':
    case 'unknown':
    case 'any':
    case 'map':
      return 'JSON';
    case 'union':
      return isDiscriminatedUnion(def) ? undefined : 'JSON';
    case 'literal':
      return typeof def.values?.[0] === 'string' ? 'String' : 'JSON';
    default:
      return undefined;
  }
}

/** The GraphQL enum of a zod enum (named by its `.meta({ id })`). */
export function enumOf(schema: z.ZodEnum): ReturnType<typeof builder.enumType> {
  const id = metaId(schema);
  if (!id) throw new Error('enumOf needs a .meta({ id })');
  return enumRef(Object.values(defOf(schema).entries!).map(String), id);
}

// ---------- inputs ----------

function inputTypeFor(schema: z.ZodType, name: string): { type: AnyInputRef | [AnyInputRef]; required: boolean; description?: string } {
  const { core, optional, nullable } = unwrap(schema, 'input');
  const def = defOf(core);
  const required = !optional && !nullable;
  const description = describe(schema, core);
  if (def.type === 'array') {
    const element = inputTypeFor(def.element!, name);
    return { type: [element.type as AnyInputRef], required, description: description ?? element.description };
  }
  if (def.type === 'enum')
    return { type: enumRef(Object.values(def.entries!).map(String), metaId(core) ?? name) as unknown as AnyInputRef, required, description };
  const scalar = scalarFor(core, schema);
  if (scalar) return { type: scalar, required, description };
  return { type: inputOf(core, name), required, description };
}

/** Single-value literal fields (`type: "limit"`) carry no choice: GraphQL inputs leave them out. */
export function isLiteralField(field: z.ZodType): boolean {
  const def = defOf(unwrap(field).core);
  return def.type === 'literal' && def.values?.length === 1;
}

function inputFields(shape: Record<string, z.ZodType>, parent: string) {
  return (t: { field: (opts: object) => FieldRef }) => {
    const fields: Record<string, FieldRef> = {};
    for (const [key, field] of Object.entries(shape)) {
      if (isLiteralField(field)) continue;
      const { type, required, description } = inputTypeFor(field, `${parent}${pascal(key)}`);
      fields[graphqlName(key)] = t.field({ type, required, description });
    }
    return fields;
  };
}

/**
 * The GraphQL input type of a zod object or discriminated union. `name` is used when the
 * schema has no `.meta({ id })`; derived names get the `Input` suffix.
 */
export function inputOf(schema: z.ZodType, name: string): InputRef<Obj> {
  const { core } = unwrap(schema, 'input');
  const cached = inputs.get(core);
  if (cached) return cached as InputRef<Obj>;
  const def = defOf(core);
  const base = metaId(core) ?? name;
  if (def.type === 'object' && Object.values(def.shape!).every(isLiteralField)) {
    inputs.set(core, emptyInput());
    return emptyInput();
  }
  const typeName = claimName(base.endsWith('Input') ? base : `${base}Input`, core);
  const ref = builder.inputRef<Obj>(typeName);
  inputs.set(core, ref);
  if (def.type === 'object') {
    builder.inputType(ref as never, { description: core.description, fields: inputFields(def.shape!, base) as never });
  } else if (isDiscriminatedUnion(def)) {
    const disc = def.discriminator!;
    builder.inputType(ref as never, {
      isOneOf: true,
      description: core.description ?? `Exactly one of the fields, named after the \`${disc}\` it stands for`,
      fields: ((t: { field: (opts: object) => FieldRef }) => {
        const fields: Record<string, FieldRef> = {};
        for (const member of def.options!) {
          const value = discriminatorValue(member, disc);
          const memberCore = unwrap(member).core;
          fields[graphqlName(value)] = t.field({ type: inputOf(memberCore, `${base}${pascal(value)}`), required: false, description: memberCore.description });
        }
        return fields;
      }) as never,
    });
  } else {
    throw new Error(`cannot derive a GraphQL input from a zod ${def.type} (${typeName})`);
  }
  return ref;
}

let emptyRef: InputRef<Obj> | undefined;
function emptyInput(): InputRef<Obj> {
  emptyRef ??= builder.inputType('EmptyInput', {
    description: 'A choice without fields of its own: pass `{}`',
    fields: (t) => ({ _: t.boolean({ required: false, description: 'unused' }) }),
  }) as unknown as InputRef<Obj>;
  return emptyRef;
}

// ---------- outputs ----------

interface OutputField {
  type: AnyOutputRef | [AnyOutputRef];
  nullable: boolean | { list: boolean; items: boolean };
  description?: string;
}

function outputTypeFor(schema: z.ZodType, name: string): OutputField {
  const { core, optional, nullable } = unwrap(schema, 'output');
  const def = defOf(core);
  const isNullable = optional || nullable;
  const description = describe(schema, core);
  if (def.type === 'array') {
    const element = outputTypeFor(def.element!, name);
    return {
      type: [element.type as AnyOutputRef],
      nullable: { list: isNullable, items: element.nullable === true },
      description: description ?? element.description,
    };
  }
  if (def.type === 'enum') return { type: enumRef(Object.values(def.entries!).map(String), metaId(core) ?? name), nullable: isNullable, description };
  const scalar = scalarFor(core, schema);
  if (scalar) return { type: scalar, nullable: isNullable, description };
  return { type: objectOf(core, name) as AnyOutputRef, nullable: isNullable, description };
}

type FieldBuilder = { field: (opts: object) => unknown };

function objectFields(shape: Record<string, z.ZodType>, parent: string) {
  return (t: FieldBuilder) => {
    const fields: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(shape)) {
      const out = outputTypeFor(field, `${parent}${pascal(key)}`);
      fields[graphqlName(key)] = t.field({
        type: out.type,
        nullable: out.nullable,
        description: out.description,
        resolve: (parent: Record<string, unknown>) => parent[key] ?? null,
      });
    }
    return fields;
  };
}

/**
 * The GraphQL output type of a zod object (an object type) or discriminated union (a union of
 * object types, resolved by the discriminator). Resolvers return values of the zod output
 * type: spec-named properties, read by camelCase fields.
 */
export function objectOf<S extends z.ZodType>(schema: S, name?: string): ObjectRef<Types, z.output<S>> {
  const { core } = unwrap(schema, 'output');
  const cached = outputs.get(core);
  if (cached) return cached as ObjectRef<Types, z.output<S>>;
  const typeName = claimName(metaId(core) ?? name ?? '', core);
  if (!typeName) throw new Error('objectOf needs a name or a .meta({ id })');
  const def = defOf(core);
  if (def.type === 'object') {
    const ref = builder.objectRef<z.output<S>>(typeName);
    outputs.set(core, ref as AnyOutputRef);
    ref.implement({ description: core.description, fields: objectFields(def.shape!, typeName) as never });
    return ref;
  }
  if (isDiscriminatedUnion(def)) {
    const disc = def.discriminator!;
    const members = new Map<string, ObjectRef<Types, Obj>>();
    for (const member of def.options!) {
      const value = discriminatorValue(member, disc);
      const memberCore = unwrap(member, 'output').core;
      members.set(value, objectOf(memberCore, metaId(memberCore) ?? `${typeName}${pascal(value)}`) as ObjectRef<Types, Obj>);
    }
    const ref = builder.unionType(typeName, {
      description: core.description,
      types: [...members.values()] as never,
      resolveType: (value: Record<string, unknown>) => members.get(String(value[disc])) as never,
    });
    outputs.set(core, ref as AnyOutputRef);
    return ref as unknown as ObjectRef<Types, z.output<S>>;
  }
  throw new Error(`cannot derive a GraphQL output type from a zod ${def.type} (${typeName})`);
}
