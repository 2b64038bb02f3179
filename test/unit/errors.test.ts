// The one error table (src/errors.ts): codes are a closed union (a typo fails `npm run
// typecheck`, which covers this file), and `errorAnswer` gives REST, GraphQL and GraphQL over
// SSE the same status and code for the same error.
import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { AppError, ERROR_TABLE, errorAnswer, isErrorCode, type ErrorCode } from '../../src/errors.js';
import { toRestError } from '../../rest/executor.js';

describe('the error table', () => {
  it('refuses a code that is not in the table at compile time', () => {
    // @ts-expect-error: 'not_a_code' is not an ErrorCode; this line fails typecheck if codes become free strings.
    const typo = new AppError('not_a_code', 'x');
    expect(isErrorCode(typo.code)).toBe(false);
    const known: ErrorCode = 'not_found';
    expect(new AppError(known, 'gone').status).toBe(404);
  });

  it('gives each code its status and keeps the message', () => {
    for (const [code, status] of Object.entries(ERROR_TABLE)) {
      expect(errorAnswer(new AppError(code as ErrorCode, `m ${code}`))).toEqual({ status, code, message: `m ${code}` });
    }
  });

  it("takes GraphQL's own input errors as the caller's mistake and masks everything else", () => {
    expect(errorAnswer(new GraphQLError('Int cannot represent', { extensions: { code: 'BAD_USER_INPUT' } }))).toEqual({
      status: 400,
      code: 'invalid_request',
      message: 'Int cannot represent',
    });
    expect(errorAnswer(new Error('secret stack detail'))).toEqual({ status: 500, code: 'internal_error', message: 'Unexpected error.' });
    expect(errorAnswer(new GraphQLError('x', { extensions: { code: 'made_up' } })).status).toBe(500);
  });

  it('the REST edge answers exactly what the table says', () => {
    const err = new AppError('version_conflict', 'stale');
    expect(toRestError(err)).toEqual(errorAnswer(err));
    expect(toRestError(err).status).toBe(409);
  });
});
