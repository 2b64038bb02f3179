// The Yoga server: /graphql with GraphiQL, the same context the REST layer uses, masked errors
// (an unexpected exception reaches the client as "Unexpected error." and is logged).
import { createYoga, maskError as defaultMaskError, type Plugin } from 'graphql-yoga';
import { PothosValidationError } from '@pothos/core';
import { AppError } from '../errors.js';
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';
import { GraphQLError } from 'graphql';
import { schema } from './schema.js';
import { buildContext, type Context } from './context.js';
import { logger } from '../logger.js';
import { operationLimits } from './operation-limits.js';

export interface ServerContext {
  req: ExpressRequest;
  res: ExpressResponse;
}

/** A GraphQL error marked as the caller's mistake: 400 `invalid_request` (Yoga's own codes were GRAPHQL_PARSE_FAILED / GRAPHQL_VALIDATION_FAILED). */
function callerMistake(error: GraphQLError): GraphQLError {
  if (typeof error.extensions?.code === 'string' && error.extensions.code !== 'GRAPHQL_VALIDATION_FAILED' && error.extensions.code !== 'GRAPHQL_PARSE_FAILED')
    return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    extensions: { ...error.extensions, code: 'invalid_request', http: { status: 400 } },
  });
}

const documentMistakes: Plugin = {
  onParse() {
    return ({ result, replaceParseResult }) => {
      if (result instanceof GraphQLError) replaceParseResult(callerMistake(result));
    };
  },
  onValidate() {
    return ({ result, setResult }) => {
      if (result.length) setResult(result.map((e: Error) => (e instanceof GraphQLError ? callerMistake(e) : e)));
    };
  },
};

export const yoga = createYoga<ServerContext, Context>({
  schema,
  graphqlEndpoint: '/graphql',
  landingPage: false,
  graphiql: { title: 'Agent Service GraphiQL' },
  context: ({ request }) => buildContext(request.headers),
  // How much one operation may ask for and answer (src/graphql/operation-limits.ts); a document
  // that does not parse or validate is the caller's mistake, coded as every other one is.
  plugins: [operationLimits, documentMistakes],
  maskedErrors: {
    maskError(error, message, isDev) {
      const original = error instanceof GraphQLError ? error.originalError : error;
      // Connection cursors are opaque: one that does not decode is the caller's mistake.
      if (original instanceof PothosValidationError && /cursor/i.test(original.message)) {
        return new AppError('invalid_request', 'the cursor is not one this service handed out');
      }
      // Pothos checks connection arguments (`first: -1`, `before` with `first`) as it resolves:
      // the caller's mistake, a 400 with GraphQL's error shape, not a 500.
      if (original instanceof PothosValidationError) return new AppError('invalid_request', original.message);
      // GraphQL's own errors before execution (a variable of the wrong type, a null for a
      // non-null variable, an Int over 32 bits): no path and no cause but another GraphQL error
      // (graphql-js wraps the coercion error), the caller's mistake (400).
      // (An execution error without a cause, e.g. null for a non-null field, has a path: a bug.)
      const cause = error instanceof GraphQLError ? error.originalError : undefined;
      const ownError = !cause || (cause instanceof GraphQLError && !cause.originalError);
      if (error instanceof GraphQLError && ownError && !error.path && (error.extensions?.code === undefined || error.extensions?.code === 'BAD_USER_INPUT')) {
        return new GraphQLError(error.message, {
          nodes: error.nodes,
          source: error.source,
          positions: error.positions,
          extensions: { ...error.extensions, code: 'invalid_request', http: { status: 400 } },
        });
      }
      if (!(original instanceof GraphQLError) && !(error instanceof GraphQLError && !error.originalError)) {
        logger.error({ err: original ?? error }, 'unexpected error in GraphQL execution');
      }
      const masked = defaultMaskError(error, message, isDev);
      if (masked instanceof GraphQLError && (masked.extensions?.code === undefined || masked.extensions?.code === 'INTERNAL_SERVER_ERROR')) {
        return new GraphQLError(masked.message, {
          nodes: masked.nodes,
          source: masked.source,
          positions: masked.positions,
          path: masked.path,
          extensions: { ...masked.extensions, code: 'internal_error', http: { status: 500 } },
        });
      }
      return masked;
    },
  },
  logging: {
    debug: (...args) => logger.debug(args),
    info: (...args) => logger.info(args),
    warn: (...args) => logger.warn(args),
    error: (...args) => logger.error(args),
  },
});
