// Runs a route's pre-parsed document through Yoga's envelope, so REST shares GraphQL's context,
// auth scopes, error masking and plugins.
import type { Request, Response } from 'express';
import type { ExecutionResult, GraphQLError } from 'graphql';
import { yoga } from '../src/graphql/yoga.js';
import type { Context } from '../src/graphql/context.js';
import type { RestRoute } from './route.js';
import { STATUS_BY_CODE } from '../src/errors.js';

export interface Envelope {
  execute: (args: any) => any;
  subscribe: (args: any) => any;
  schema: any;
  contextFactory: () => Promise<Context> | Context;
}

export function envelopeFor(req: Request, res: Response): Envelope {
  const request = { headers: { get: (name: string) => req.get(name) ?? null }, method: req.method, url: req.originalUrl };
  return yoga.getEnveloped({ req, res, request } as never) as unknown as Envelope;
}

export async function runRoute(env: Envelope, ctx: Context, route: RestRoute, variables: Record<string, unknown>): Promise<ExecutionResult> {
  return (await env.execute({
    schema: env.schema,
    document: route.parsed!,
    contextValue: ctx,
    variableValues: variables,
  })) as ExecutionResult;
}

export interface RestError {
  status: number;
  code: string;
  message: string;
}

/** The first GraphQL error as the spec's `{code, message}` with its HTTP status. */
export function toRestError(error: GraphQLError): RestError {
  const ext = (error.extensions ?? {}) as { code?: string; http?: { status?: number } };
  const code = ext.code;
  if (code && STATUS_BY_CODE[code] !== undefined) {
    return { status: ext.http?.status ?? STATUS_BY_CODE[code]!, code, message: error.message };
  }
  if (code === 'BAD_USER_INPUT' || code === 'GRAPHQL_VALIDATION_FAILED' || ext.http?.status === 400) {
    return { status: 400, code: 'invalid_request', message: error.message };
  }
  return { status: 500, code: 'internal_error', message: 'Unexpected error.' };
}
