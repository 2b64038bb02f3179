// JSON Schema keywords that document, in the OpenAPI document, rules a contract enforces with a
// refinement zod cannot express as JSON Schema itself (merged into the schema by `.meta()`).
// The refinement stays the rule; test/rest/openapi-fuzz.test.ts checks the two agree both ways.

/** An absolute http(s) URL (the outbound guard then refuses private and link-local hosts). */
export const ABSOLUTE_HTTP_URL = { format: 'uri', pattern: '^[hH][tT][tT][pP][sS]?://[^/?#]' } as const;

/** A string holding a JSON object (`"{\"k\": 1}"`), as 2020-12's content keywords say it. */
export const JSON_OBJECT_STRING = { contentMediaType: 'application/json', contentSchema: { type: 'object' } } as const;

/** Exactly one of two optional string fields (each branch names what it requires, for linters). */
export const exactlyOneOf = (a: string, b: string) => ({
  oneOf: [a, b].map((k) => ({ properties: { [k]: { type: 'string' } }, required: [k] })),
});

/** The object has no `key` (in a `not`, naming the property it requires, for linters). */
export const without = (key: string) => ({ not: { properties: { [key]: {} }, required: [key] } });
