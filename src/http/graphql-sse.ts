// GraphQL over SSE (graphql-sse protocol) at /graphql/stream, running operations through the
// same Yoga envelope as /graphql and the REST layer (context, auth, masking).
import { createHandler } from 'graphql-sse/lib/use/express';
import type { GraphQLError } from 'graphql';
import { yoga } from '../graphql/yoga.js';
import { envelopeFor, toRestError, type Envelope } from '../../rest/executor.js';
import type { Context } from '../graphql/context.js';

type Ctx = Context & { envelope: Envelope } & Record<PropertyKey, unknown>;

function errorResponse(err: unknown) {
  const e = toRestError(err as GraphQLError);
  return [JSON.stringify({ errors: [{ message: e.message, extensions: { code: e.code } }] }), { status: e.status, statusText: e.code, headers: { 'content-type': 'application/json' } }] as const;
}

export function graphqlSseHandler() {
  return createHandler<Ctx>({
    authenticate: () => null, // distinct connections mode only
    onSubscribe: async (req, params) => {
      const envelope = envelopeFor(req.raw, req.context.res);
      let ctx: Context;
      try {
        ctx = await envelope.contextFactory();
      } catch (err) {
        return errorResponse(err);
      }
      const env = envelope as Envelope & { parse: typeof import('graphql').parse; validate: typeof import('graphql').validate };
      let document;
      try {
        document = env.parse(params.query);
      } catch (err) {
        return { errors: [err as GraphQLError] };
      }
      const errors = env.validate(env.schema, document);
      if (errors.length) return { errors };
      return {
        schema: env.schema,
        document,
        operationName: params.operationName,
        variableValues: params.variables,
        contextValue: { ...ctx, envelope },
      };
    },
    execute: (args) => (args.contextValue as Ctx).envelope.execute(args),
    subscribe: (args) => (args.contextValue as Ctx).envelope.subscribe(args),
  });
}

export { yoga };
