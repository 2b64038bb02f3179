// The one place an operation's input is validated. GraphQL arguments are converted back to the
// spec's shape and parsed by the operation's zod schema; a REST request arrives already parsed
// by the same schema at the edge, so its value is taken as is (validated once, not twice).
import type { z } from 'zod';
import type { Context } from './context.js';
import { parseInput } from '../validation.js';
import { fromGraphQLInput } from '../contract/values.js';

export function takeInput<S extends z.ZodType>(ctx: Context, schema: S, arg: unknown): z.output<S> {
  if (ctx.validated && ctx.validated.schema === schema) return ctx.validated.value as z.output<S>;
  return parseInput(schema, fromGraphQLInput(schema, arg));
}
