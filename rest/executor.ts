// Runs a route's pre-parsed document against the shared GraphQL schema with the same context
// builder Yoga uses, so REST shares GraphQL's resolvers, auth scopes and errors. What a GraphQL
// request pays each time is paid here once per document: validation against the schema, then a
// graphql-jit compilation (graphql-js executes the documents jit cannot compile).
import type { Request, Response } from 'express';
import { execute, validate, type DocumentNode, type ExecutionResult, type GraphQLError } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { schema } from '../src/graphql/schema.js';
import { buildContext, type Context } from '../src/graphql/context.js';
import type { RestRoute } from './route.js';
import { errorAnswer, isErrorCode, type ErrorAnswer } from '../src/errors.js';
import { logger } from '../src/logger.js';

export interface ExecuteArgs {
  schema: unknown;
  document: DocumentNode;
  contextValue: Context;
  variableValues: Record<string, unknown>;
}

export interface Envelope {
  execute: (args: ExecuteArgs) => Promise<ExecutionResult> | ExecutionResult;
  schema: unknown;
  contextFactory: () => Promise<Context> | Context;
}

type Runner = (ctx: Context, variables: Record<string, unknown>) => Promise<ExecutionResult> | ExecutionResult;

/** Validated once; then the compiled query, or graphql-js when jit cannot compile the document. */
const prepared = new WeakMap<DocumentNode, Runner>();

export function prepareDocument(document: DocumentNode): Runner {
  let run = prepared.get(document);
  if (run) return run;
  const errors = validate(schema, document);
  if (errors.length) {
    // A route whose document does not fit the schema is a bug: answer 500 every time, log once.
    logger.error({ errors: errors.map((e) => e.message) }, 'REST route document does not validate against the schema');
    run = () => ({ errors: [internalError()] });
  } else {
    const compiled = compileQuery(schema, document);
    let exec: Runner;
    if (isCompiledQuery(compiled)) {
      exec = (ctx, variables) => compiled.query(undefined, ctx, variables);
    } else {
      logger.warn({ errors: compiled.errors?.map((e) => e.message) }, 'graphql-jit cannot compile a REST document; graphql-js executes it');
      exec = (ctx, variables) => execute({ schema, document, contextValue: ctx, variableValues: variables });
    }
    run = (ctx, variables) => {
      const result = exec(ctx, variables);
      return result instanceof Promise ? result.then(logUnexpected) : logUnexpected(result);
    };
  }
  prepared.set(document, run);
  return run;
}

/** Errors without one of our codes are bugs: logged with their cause (the answer masks them). */
function logUnexpected(result: ExecutionResult): ExecutionResult {
  for (const error of result.errors ?? []) {
    if (!isErrorCode((error.extensions as { code?: unknown } | undefined)?.code))
      logger.error({ err: error.originalError ?? error, path: error.path }, 'unexpected error in GraphQL execution');
  }
  return result;
}

function internalError(): GraphQLError {
  return Object.assign(new Error('Unexpected error.'), { extensions: { code: 'internal_error', http: { status: 500 } } }) as unknown as GraphQLError;
}

/** The context (built as Yoga builds it for /graphql) and the prepared execution for one request. */
export function envelopeFor(req: Request, _res: Response, bearerHash: string | null = null): Envelope {
  // The node:http headers (lower-cased names), as Express's req.get reads them.
  const headers = { get: (name: string) => (req.headers[name.toLowerCase()] as string | undefined) ?? null };
  return {
    schema,
    contextFactory: () => buildContext(headers, bearerHash),
    execute: (args) => prepareDocument(args.document)(args.contextValue, args.variableValues),
  };
}

export async function runRoute(env: Envelope, ctx: Context, route: RestRoute, variables: Record<string, unknown>): Promise<ExecutionResult> {
  return env.execute({ schema: env.schema, document: route.parsed!, contextValue: ctx, variableValues: variables });
}

export type RestError = ErrorAnswer;

/** The first GraphQL error as the spec's `{code, message}` with its HTTP status (src/errors.ts). */
export function toRestError(error: GraphQLError): RestError {
  return errorAnswer(error);
}
