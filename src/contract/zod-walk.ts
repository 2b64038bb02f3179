// Reading zod 4 schemas structurally: the one place that looks at zod's internal definitions, so
// the GraphQL type builder and the value converters agree on what a schema means.
import type { z } from 'zod';

/** zod's internal definition, as far as this module reads it. */
export interface ZodDef {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  options?: z.ZodType[];
  discriminator?: string;
  entries?: Record<string, string | number>;
  values?: unknown[];
  valueType?: z.ZodType;
  getter?: () => z.ZodType;
  checks?: { _zod: { def: Record<string, unknown> } }[];
}

export function defOf(schema: z.ZodType): ZodDef {
  return (schema as unknown as { _zod: { def: ZodDef } })._zod.def;
}

export interface Unwrapped {
  /** The schema under optional/nullable/default/pipe/readonly wrappers. */
  core: z.ZodType;
  /** The value may be absent (optional or defaulted). */
  optional: boolean;
  /** The value may be null. */
  nullable: boolean;
}

/** Peels wrappers. `side` picks the input or the output of pipes (transforms). */
export function unwrap(schema: z.ZodType, side: 'input' | 'output' = 'input'): Unwrapped {
  let optional = false;
  let nullable = false;
  let s = schema;
  for (;;) {
    const def = defOf(s);
    if (def.type === 'optional') {
      optional = true;
      s = def.innerType!;
      continue;
    }
    if (def.type === 'nullable') {
      nullable = true;
      s = def.innerType!;
      continue;
    }
    if (def.type === 'default' || def.type === 'prefault') {
      if (side === 'input') optional = true;
      s = def.innerType!;
      continue;
    }
    if (def.type === 'readonly' || def.type === 'catch' || def.type === 'nonoptional') {
      s = def.innerType!;
      continue;
    }
    if (def.type === 'pipe') {
      const next = side === 'input' ? def.in! : def.out!;
      // A transform's output side carries no shape: keep its input.
      s = defOf(next).type === 'transform' ? def.in! : next;
      continue;
    }
    if (def.type === 'lazy') {
      s = def.getter!();
      continue;
    }
    return { core: s, optional, nullable };
  }
}

/** The literal value of a union member's discriminator field. */
export function discriminatorValue(member: z.ZodType, discriminator: string): string {
  const field = defOf(member).shape?.[discriminator];
  const values = field ? defOf(unwrap(field).core).values : undefined;
  if (!values || values.length !== 1 || typeof values[0] !== 'string') throw new Error(`union member without a literal "${discriminator}"`);
  return values[0];
}

export function isDiscriminatedUnion(def: ZodDef): boolean {
  return def.type === 'union' && typeof def.discriminator === 'string';
}

/** snake_case / dotted / kebab names → camelCase GraphQL names. */
export function graphqlName(name: string): string {
  const camel = name.replace(/[._\-\s]+([a-zA-Z0-9])/g, (_m, c: string) => c.toUpperCase()).replace(/[^_a-zA-Z0-9]/g, '_');
  return /^[0-9]/.test(camel) ? `_${camel}` : camel;
}

export function pascal(name: string): string {
  const camel = graphqlName(name);
  return camel.charAt(0).toUpperCase() + camel.slice(1);
}

/** A valid GraphQL enum value name for a string value (`exa.search` → `exa_search`). */
export function enumName(value: string): string {
  const name = value.replace(/[^_a-zA-Z0-9]/g, '_');
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

/** Human-readable limits of a schema, for GraphQL descriptions (enforced by the same schema). */
export function limitsOf(schema: z.ZodType): string[] {
  const out: string[] = [];
  for (const check of defOf(schema).checks ?? []) {
    const d = check._zod.def;
    switch (d.check) {
      case 'max_length':
        out.push(`at most ${d.maximum}`);
        break;
      case 'min_length':
        out.push(`at least ${d.minimum}`);
        break;
      case 'length_equals':
        out.push(`exactly ${d.length}`);
        break;
      case 'less_than':
        out.push(`${d.inclusive ? '≤' : '<'} ${String(d.value)}`);
        break;
      case 'greater_than':
        out.push(`${d.inclusive ? '≥' : '>'} ${String(d.value)}`);
        break;
      case 'string_format':
        if (d.format === 'regex') out.push(`matches ${String(d.pattern)}`);
        else out.push(`format ${String(d.format)}`);
        break;
      default:
        break;
    }
  }
  return out;
}

export function isIntegerSchema(schema: z.ZodType): boolean {
  return (schema as unknown as { isInt?: boolean }).isInt === true;
}

/** Description of a schema (or of its wrappers), plus its limits. */
export function describe(schema: z.ZodType, core: z.ZodType): string | undefined {
  const text = schema.description ?? core.description;
  const limits = limitsOf(core);
  const parts = [text, limits.length ? `(${limits.join(', ')})` : undefined].filter(Boolean);
  return parts.length ? parts.join(' ') : undefined;
}

/** String schemas that GraphQL serves as `DateTime` (the same ISO string on both surfaces). */
export const dateTimeStrings = new WeakSet<z.ZodType>();
export function dateTime<S extends z.ZodType>(schema: S): S {
  dateTimeStrings.add(schema);
  return schema;
}
