// Moving values between the spec's JSON shapes (REST bodies, domain values) and the GraphQL
// shapes derived from the same zod schemas (camelCase names, @oneOf inputs, enum names).
// Structural only: validation is the schema's job, done once where the value enters.
import type { z } from 'zod';
import { defOf, unwrap, isDiscriminatedUnion, discriminatorValue, graphqlName, enumName } from './zod-walk.js';

type Json = unknown;

function literalOf(field: z.ZodType): unknown {
  const def = defOf(unwrap(field).core);
  return def.type === 'literal' && def.values?.length === 1 ? def.values[0] : undefined;
}
const isLiteral = (field: z.ZodType) => literalOf(field) !== undefined;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Spec-shaped value → GraphQL variables (for REST documents). */
export function toGraphQLInput(schema: z.ZodType, value: Json): Json {
  if (value === null || value === undefined) return value;
  const { core } = unwrap(schema, 'output');
  const def = defOf(core);
  if (def.type === 'array') return Array.isArray(value) ? value.map((v) => toGraphQLInput(def.element!, v)) : value;
  if (def.type === 'enum') return typeof value === 'string' ? enumName(value) : value;
  if (def.type === 'object' && isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(def.shape!)) {
      if (value[key] !== undefined && !isLiteral(field)) out[graphqlName(key)] = toGraphQLInput(field, value[key]);
    }
    return out;
  }
  if (isDiscriminatedUnion(def) && isObject(value)) {
    const disc = def.discriminator!;
    const member = def.options!.find((m) => discriminatorValue(m, disc) === value[disc]);
    if (!member) return value;
    return { [graphqlName(String(value[disc]))]: toGraphQLInput(member, value) };
  }
  return value;
}

/** GraphQL arguments (coerced: enum values already internal) → the spec-shaped value. */
export function fromGraphQLInput(schema: z.ZodType, value: Json): Json {
  if (value === null || value === undefined) return value;
  const { core } = unwrap(schema, 'input');
  const def = defOf(core);
  if (def.type === 'array') return Array.isArray(value) ? value.map((v) => fromGraphQLInput(def.element!, v)) : value;
  if (def.type === 'object' && isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(def.shape!)) {
      const literal = literalOf(field);
      // Literal fields are left out of GraphQL inputs: the schema knows their only value.
      if (literal !== undefined) out[key] = literal;
      else if (value[graphqlName(key)] !== undefined) out[key] = fromGraphQLInput(field, value[graphqlName(key)]);
    }
    return out;
  }
  if (isDiscriminatedUnion(def) && isObject(value)) {
    for (const member of def.options!) {
      const inner = value[graphqlName(discriminatorValue(member, def.discriminator!))];
      if (inner !== undefined && inner !== null) return fromGraphQLInput(member, isObject(inner) ? inner : {});
    }
  }
  return value;
}

/** A field's GraphQL output shape (wrappers and named type), to spot union members that differ. */
function shapeOf(field: z.ZodType): string {
  const { core, optional, nullable } = unwrap(field, 'output');
  const def = defOf(core);
  const wrap = optional || nullable ? '' : '!';
  if (def.type === 'array') return `[${shapeOf(def.element!)}]${wrap}`;
  const id = (core.meta() as { id?: string } | undefined)?.id;
  return `${id ?? def.type}${wrap}`;
}

const aliasCache = new WeakMap<z.ZodType, Set<string>>();
/**
 * Fields of a union's members whose shapes differ between members (a `text: String!` here and
 * a `text: String` there): GraphQL refuses to select them under one response name, so REST
 * documents alias them per member (`text_StatusPart: text`).
 */
function conflictingKeys(union: z.ZodType): Set<string> {
  let keys = aliasCache.get(union);
  if (keys) return keys;
  const shapes = new Map<string, Set<string>>();
  for (const member of defOf(union).options!) {
    for (const [key, field] of Object.entries(defOf(unwrap(member, 'output').core).shape!)) {
      (shapes.get(key) ?? shapes.set(key, new Set()).get(key)!).add(shapeOf(field));
    }
  }
  keys = new Set([...shapes].filter(([, set]) => set.size > 1).map(([key]) => key));
  aliasCache.set(union, keys);
  return keys;
}

function memberName(member: z.ZodType): string {
  const name = (unwrap(member, 'output').core.meta() as { id?: string } | undefined)?.id;
  if (!name) throw new Error('union members selected by REST documents need a .meta({ id })');
  return name;
}

const aliasOf = (key: string, member: z.ZodType) => `${graphqlName(key)}_${memberName(member)}`;

/** The GraphQL selection set that reads every field of a zod output shape. */
export function selectionOf(schema: z.ZodType): string {
  const { core } = unwrap(schema, 'output');
  const def = defOf(core);
  if (def.type === 'array') return selectionOf(def.element!);
  if (def.type === 'object') return fieldsSelection(def.shape!, new Set(), core);
  if (isDiscriminatedUnion(def)) {
    const conflicts = conflictingKeys(core);
    return def
      .options!.map((member) => {
        const memberCore = unwrap(member, 'output').core;
        return `... on ${memberName(memberCore)} { ${fieldsSelection(defOf(memberCore).shape!, conflicts, memberCore)} }`;
      })
      .join(' ');
  }
  return '';
}

function fieldsSelection(shape: Record<string, z.ZodType>, aliased: Set<string>, member: z.ZodType): string {
  return Object.entries(shape)
    .map(([key, field]) => {
      const sub = selectionOf(field);
      const name = aliased.has(key) ? `${aliasOf(key, member)}: ${graphqlName(key)}` : graphqlName(key);
      return sub ? `${name} { ${sub} }` : name;
    })
    .join(' ');
}

/** A GraphQL result (camelCase names, enum names) → the spec-shaped value the schema describes. */
export function fromGraphQLOutput<S extends z.ZodType>(schema: S, data: Json): z.output<S> {
  return outputConverter(schema)(data) as z.output<S>;
}

type Convert = (value: Json) => Json;

// Converters are compiled once per schema (REST answers run them per request): the schema's
// wrappers, names, enum tables and union members are read here, not on every value.
const converters = new WeakMap<z.ZodType, Convert>();

/** The compiled `fromGraphQLOutput` of one schema. */
export function outputConverter(schema: z.ZodType): Convert {
  let convert = converters.get(schema);
  if (convert) return convert;
  // Recursive (lazy) schemas reach themselves while compiling: they get this forwarder.
  let compiled: Convert | undefined;
  convert = (value) => (compiled ??= compileOutput(schema))(value);
  converters.set(schema, convert);
  return convert;
}

interface OutputField {
  key: string;
  /** Left out when null or absent: optional and not nullable (GraphQL can only say null). */
  omitNull: boolean;
  convert: Convert;
}

function outputFields(shape: Record<string, z.ZodType>): OutputField[] {
  return Object.entries(shape).map(([key, field]) => {
    const { optional, nullable } = unwrap(field, 'output');
    return { key, omitNull: optional && !nullable, convert: outputConverter(field) };
  });
}

function fieldsOutput(fields: OutputField[], value: Record<string, unknown>, names: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    const v = value[names[i]!];
    if ((v === null || v === undefined) && f.omitNull) continue;
    out[f.key] = f.convert(v);
  }
  return out;
}

function compileOutput(schema: z.ZodType): Convert {
  const { core } = unwrap(schema, 'output');
  const def = defOf(core);
  if (def.type === 'array') {
    const element = outputConverter(def.element!);
    return (value) => (value === null || value === undefined ? null : Array.isArray(value) ? value.map((v) => element(v)) : value);
  }
  if (def.type === 'enum') {
    const byName = new Map(Object.values(def.entries!).map((v) => [enumName(String(v)), v]));
    return (value) => (value === null || value === undefined ? null : typeof value === 'string' ? (byName.get(value) ?? value) : value);
  }
  if (def.type === 'object') {
    let fields: OutputField[] | undefined;
    let names: string[] | undefined;
    return (value) => {
      if (value === null || value === undefined) return null;
      if (!isObject(value)) return value;
      fields ??= outputFields(def.shape!);
      names ??= fields.map((f) => graphqlName(f.key));
      return fieldsOutput(fields, value, names);
    };
  }
  if (isDiscriminatedUnion(def)) {
    const disc = def.discriminator!;
    type Member = { fields: OutputField[]; names: string[]; aliases: (string | null)[] };
    let members: Map<unknown, Member> | undefined;
    const compileMembers = () => {
      const conflicts = conflictingKeys(core);
      const byValue = new Map<unknown, Member>();
      for (const member of def.options!) {
        const value = discriminatorValue(member, disc);
        if (byValue.has(value)) continue; // the first member with this value wins, as find() did
        const fields = outputFields(defOf(unwrap(member, 'output').core).shape!);
        byValue.set(value, {
          fields,
          names: fields.map((f) => graphqlName(f.key)),
          aliases: fields.map((f) => (conflicts.has(f.key) ? aliasOf(f.key, member) : null)),
        });
      }
      return byValue;
    };
    return (value) => {
      if (value === null || value === undefined) return null;
      if (!isObject(value)) return value;
      members ??= compileMembers();
      const member = members.get(value[disc]);
      if (!member) return value;
      // A conflicting field is read under its per-member alias when the document used one.
      const names = member.aliases.map((alias, i) => (alias !== null && alias in value ? alias : member.names[i]!));
      return fieldsOutput(member.fields, value, names);
    };
  }
  return (value) => value ?? null;
}
