// fast-check arbitraries from JSON Schema (2020-12, as the OpenAPI 3.1 document carries it):
// `valid(schema)` generates values the schema accepts (patterns through fc.stringMatching,
// formats, bounds, required keys, closed objects, unions), `invalid(schema)` values it refuses
// in one place each (a wrong type, a number out of range, a missing required field, an oversized
// string, an unknown key, a value outside an enum, `null`). Both are judged again by Ajv against
// the same document afterwards (test/rest/openapi-fuzz.test.ts), so a generator that misses a rule
// only moves a request to the other side, it cannot make a test pass wrongly.
import fc from 'fast-check';

export type JsonSchema = { [k: string]: unknown };

const MAX_DEPTH = 6;
const isObject = (v: unknown): v is JsonSchema => v !== null && typeof v === 'object' && !Array.isArray(v);

export class SchemaArbitraries {
  constructor(private readonly components: Record<string, JsonSchema>) {}

  /** The schema a `$ref` points at (components only), or the schema itself. */
  resolve(schema: JsonSchema | undefined): JsonSchema {
    let s = schema ?? {};
    for (let i = 0; i < 8 && typeof s.$ref === 'string'; i++) s = this.components[s.$ref.split('/').pop()!] ?? {};
    return s;
  }

  /** Values the schema accepts (most of the time: bounds fast-check cannot honour are left to Ajv). */
  valid(input: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
    const schema = this.resolve(input);
    if (depth > MAX_DEPTH) return fc.constant(null);
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    const union = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
    if (union?.length) {
      // a union next to an object's own properties (zod's refinements documented as oneOf)
      const base = { ...schema, oneOf: undefined, anyOf: undefined };
      const own = schema.type || schema.properties;
      return fc.oneof(...union.map((branch) => this.valid(own ? this.merge(base, this.resolve(branch)) : branch, depth)));
    }
    if (Array.isArray(schema.allOf) && schema.allOf.length) {
      return this.valid(
        (schema.allOf as JsonSchema[]).reduce((a, b) => this.merge(a, this.resolve(b)), { ...schema, allOf: undefined }),
        depth,
      );
    }
    const type = schema.type;
    if (Array.isArray(type)) return fc.oneof(...type.map((t) => this.valid({ ...schema, type: t }, depth)));
    switch (type) {
      case 'string':
        return this.validString(schema);
      case 'integer': {
        const min = Math.max(numberOr(schema.minimum, -1000), numberOr(schema.exclusiveMinimum, -Infinity) + 1);
        const max = Math.min(numberOr(schema.maximum, 1_000_000), numberOr(schema.exclusiveMaximum, Infinity) - 1);
        return fc.integer({ min: Math.ceil(min), max: Math.max(Math.ceil(min), Math.floor(max)) });
      }
      case 'number':
        return fc.double({ noNaN: true, noDefaultInfinity: true, min: numberOr(schema.minimum, -1e6), max: numberOr(schema.maximum, 1e6) });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array': {
        const minLength = numberOr(schema.minItems, 0);
        const maxLength = Math.max(minLength, Math.min(numberOr(schema.maxItems, 3), minLength + 3));
        const items = this.valid(schema.items as JsonSchema | undefined, depth + 1);
        return schema.uniqueItems
          ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
          : fc.array(items, { minLength, maxLength });
      }
      case 'object':
      default:
        if (type === undefined && !schema.properties && !schema.additionalProperties) return fc.jsonValue({ maxDepth: 2 });
        return this.validObject(schema, depth);
    }
  }

  private merge(a: JsonSchema, b: JsonSchema): JsonSchema {
    const out: JsonSchema = { ...a, ...b };
    if (a.properties || b.properties) {
      const pa = (a.properties ?? {}) as Record<string, JsonSchema>;
      const pb = (b.properties ?? {}) as Record<string, JsonSchema>;
      // a branch narrows a property (`platform: {const}`, `credentials: {required}`): merged deeply
      out.properties = Object.fromEntries(
        [...new Set([...Object.keys(pa), ...Object.keys(pb)])].map((k) => [k, pa[k] && pb[k] ? this.merge(this.resolve(pa[k]), pb[k]) : (pb[k] ?? pa[k])]),
      );
    }
    if (a.required || b.required) out.required = [...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])])];
    return out;
  }

  private validString(schema: JsonSchema): fc.Arbitrary<string> {
    const min = numberOr(schema.minLength, 0);
    const max = Math.max(min, Math.min(numberOr(schema.maxLength, 24), min + 24));
    if (schema.contentMediaType === 'application/json' && isObject(schema.contentSchema)) {
      return this.valid(schema.contentSchema, 1).map((v) => JSON.stringify(v) ?? 'null');
    }
    switch (schema.format) {
      case 'uri':
      case 'url':
        return fc.constantFrom('https://hooks.example.com/h', 'https://example.com/callback');
      case 'date-time':
        return fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
      case 'email':
        return fc.constantFrom('fuzz@example.com', 'a.b@example.org');
      case 'binary':
        return fc.string({ maxLength: 32 });
      default:
        break;
    }
    if (typeof schema.pattern === 'string') {
      try {
        // the pattern as JSON Schema means it: unanchored unless it anchors itself
        return fc
          .stringMatching(new RegExp(schema.pattern))
          .filter((v) => v.length >= min && v.length <= numberOr(schema.maxLength, Infinity))
          .map((v) => v);
      } catch {
        /* a pattern fast-check cannot generate from: plain strings, judged by Ajv */
      }
    }
    return fc.string({ minLength: min, maxLength: max, unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789 -_.') });
  }

  private validObject(schema: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> {
    const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const keys = Object.keys(props);
    const required = ((schema.required as string[] | undefined) ?? []).filter((k) => keys.includes(k));
    const known = keys.length
      ? fc.record(Object.fromEntries(keys.map((k) => [k, this.valid(props[k], depth + 1)])), { requiredKeys: required })
      : fc.constant({});
    // required keys of a map (`credentials: {required: [...]}` over additionalProperties)
    const mapRequired = ((schema.required as string[] | undefined) ?? []).filter((k) => !keys.includes(k));
    const requiredOfMap =
      isObject(schema.additionalProperties) && mapRequired.length
        ? fc.record(Object.fromEntries(mapRequired.map((k) => [k, this.valid(schema.additionalProperties as JsonSchema, depth + 1)])))
        : fc.constant({});
    const extra = isObject(schema.additionalProperties)
      ? fc.dictionary(this.keyArbitrary(schema), this.valid(schema.additionalProperties, depth + 1), {
          maxKeys: Math.min(numberOr(schema.maxProperties, 3), 3),
        })
      : fc.constant({});
    return fc.tuple(known, extra, requiredOfMap).map(([k, e, r]) => ({ ...e, ...r, ...k }) as Record<string, unknown>);
  }

  private keyArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
    const names = isObject(schema.propertyNames) ? this.resolve(schema.propertyNames) : {};
    if (Array.isArray(names.enum)) return fc.constantFrom(...(names.enum as string[]));
    return this.validString({ type: 'string', minLength: 1, maxLength: 16, ...names }) as fc.Arbitrary<string>;
  }

  /**
   * Values the schema refuses, broken in one place: `base` (a valid value) with one spot made
   * wrong, or a wrong value outright.
   */
  invalid(input: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
    const schema = this.resolve(input);
    const wrongType = fc.constantFrom<unknown>(null, true, 12345, 'a string', [], {}, 1.5);
    if (depth > MAX_DEPTH) return wrongType;
    const options: fc.Arbitrary<unknown>[] = [wrongType];
    const type = schema.type;
    if (Array.isArray(schema.enum)) options.push(fc.constant('not-one-of-the-enum'));
    if (type === 'string' || (Array.isArray(type) && type.includes('string'))) {
      if (typeof schema.maxLength === 'number') options.push(fc.constant('x'.repeat(schema.maxLength + 1)));
      if (typeof schema.minLength === 'number' && schema.minLength > 0) options.push(fc.constant('x'.repeat(schema.minLength - 1)));
      options.push(fc.constant('o'.repeat(70_000)), fc.constantFrom('a\u0000b', 'x\ud800y'));
    }
    if (type === 'integer' || type === 'number') {
      if (typeof schema.maximum === 'number') options.push(fc.constantFrom(schema.maximum + 1, 2 ** 31, 2 ** 53 - 1, 1e300));
      if (typeof schema.minimum === 'number') options.push(fc.constantFrom(schema.minimum - 1, -(2 ** 31) - 1, -1e300));
      if (type === 'integer') options.push(fc.constant(1.5));
    }
    if (type === 'array' && schema.items) {
      options.push(fc.array(this.invalid(schema.items as JsonSchema, depth + 1), { minLength: 1, maxLength: 2 }));
      if (typeof schema.maxItems === 'number' && schema.maxItems < 200) options.push(fc.constant(Array.from({ length: schema.maxItems + 1 }, () => null)));
    }
    if (type === 'object' || schema.properties) options.push(this.invalidObject(schema, depth));
    return fc.oneof(...options);
  }

  private invalidObject(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
    const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const keys = Object.keys(props);
    const required = ((schema.required as string[] | undefined) ?? []).filter((k) => keys.includes(k));
    const base = this.validObject(schema, depth);
    const options: fc.Arbitrary<unknown>[] = [];
    // a missing required field
    if (required.length) options.push(fc.tuple(base, fc.constantFrom(...required)).map(([v, k]) => omit(v, k)));
    // one field broken
    if (keys.length)
      options.push(fc.constantFrom(...keys).chain((k) => fc.tuple(base, this.invalid(props[k], depth + 1)).map(([v, bad]) => ({ ...v, [k]: bad }))));
    // an unknown field on a closed object
    if (schema.additionalProperties === false) options.push(base.map((v) => ({ ...v, notAField: 1 })));
    return options.length ? fc.oneof(...options) : fc.constant(null);
  }
}

function omit(v: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _gone, ...rest } = v;
  return rest;
}

function numberOr(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}
