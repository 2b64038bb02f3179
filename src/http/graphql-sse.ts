// GraphQL over SSE (graphql-sse protocol) at /graphql/stream, running operations through Yoga's
// envelope like /graphql itself (same context, auth scopes, masking); distinct connections mode
// only (the dashboard's client), errors in the envelope with the status of src/errors.ts.
//
// Why not yoga's plugin (@graphql-yoga/plugin-graphql-sse 3.24.1 with graphql-yoga 5.24.1 and
// graphql-sse 2.6.1): mounted in its place, the same requests (test/http/graphql-sse.test.ts) answered
//  - a bad token or an unknown X-Universe: the right status, but a text/plain stack trace instead
//    of `{errors: [{message, extensions: {code}}]}` (the plugin builds the context inside its
//    onSubscribe, whose throw reaches @whatwg-node's handleErrorFromRequestHandler);
//  - a document that does not parse: 500 with a stack trace (the plugin's parse is not guarded);
//  - a subscription its resolver refuses (no token, a session not found): 400 "Unable to detect
//    operation AST" instead of one `next` frame carrying the error's code (the plugin returns
//    subscribe's `{errors}` from onSubscribe, and graphql-sse counts a result only when it has
//    `data`).
// Working around all three would wrap the plugin in more code than this handler, so it stays.
import { createHandler } from 'graphql-sse/lib/use/express';
import type { DocumentNode, ExecutionArgs, GraphQLError, GraphQLSchema, parse, validate } from 'graphql';
import { yoga } from '../graphql/yoga.js';
import type { Context } from '../graphql/context.js';
import { errorAnswer } from '../errors.js';

interface YogaEnvelope {
  parse: typeof parse;
  validate: typeof validate;
  schema: GraphQLSchema;
  contextFactory: () => Promise<Context> | Context;
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}
type Ctx = Context & { envelope: YogaEnvelope } & Record<PropertyKey, unknown>;

function errorResponse(err: unknown) {
  const { status, code, message } = errorAnswer(err);
  return [
    JSON.stringify({ errors: [{ message, extensions: { code } }] }),
    { status, statusText: code, headers: { 'content-type': 'application/json' } },
  ] as const;
}

/**
 * A document that does not parse or validate: 400 with GraphQL's errors. (graphql-sse takes a
 * returned `{errors}` without `data` for execution arguments and answered a bare "Unable to
 * detect operation AST", losing the reason.)
 */
function documentErrors(errors: readonly GraphQLError[]) {
  const body = errors.map((e) => ({ message: e.message, ...(e.locations ? { locations: e.locations } : {}), extensions: { code: 'invalid_request' } }));
  return [JSON.stringify({ errors: body }), { status: 400, statusText: 'invalid_request', headers: { 'content-type': 'application/json' } }] as const;
}

export function graphqlSseHandler() {
  return createHandler<Ctx>({
    authenticate: () => null, // distinct connections mode only
    onSubscribe: async (req, params) => {
      const raw = req.raw;
      const request = { headers: { get: (name: string) => raw.get(name) ?? null }, method: raw.method, url: raw.originalUrl };
      const envelope = yoga.getEnveloped({ req: raw, res: req.context.res, request } as never) as unknown as YogaEnvelope;
      let ctx: Context;
      try {
        ctx = await envelope.contextFactory();
      } catch (err) {
        return errorResponse(err);
      }
      let document: DocumentNode;
      try {
        document = envelope.parse(params.query);
      } catch (err) {
        return documentErrors([err as GraphQLError]);
      }
      const errors = envelope.validate(envelope.schema, document);
      if (errors.length) return documentErrors(errors);
      return {
        schema: envelope.schema,
        document,
        operationName: params.operationName,
        variableValues: params.variables,
        contextValue: { ...ctx, envelope },
      };
    },
    execute: (args) => (args.contextValue as Ctx).envelope.execute(args) as never,
    subscribe: (args) => (args.contextValue as Ctx).envelope.subscribe(args) as never,
  });
}
