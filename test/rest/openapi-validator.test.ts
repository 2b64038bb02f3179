// The response validator every HTTP test runs through: it must catch each kind of lie the
// document can tell, on the service's real document (built from the route table).
import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../rest/openapi.js';
import { routes } from '../../rest/routes/index.js';
import { ResponseValidator, OpenApiViolation, type OpenApiDocument, type ObservedResponse } from '../helpers/openapi-validator.js';

const validator = new ResponseValidator(buildOpenApi(routes) as unknown as OpenApiDocument);

const universe = { slug: 'acme', name: 'Acme', isPersonal: false, createdAt: '2026-01-01T00:00:00.000Z' };
const ok = (over: Partial<ObservedResponse> = {}): ObservedResponse => ({
  method: 'GET',
  path: '/universes/acme',
  status: 200,
  contentType: 'application/json; charset=utf-8',
  body: { universe },
  empty: false,
  ...over,
});
const violation = (res: ObservedResponse) => {
  try {
    validator.check(res);
  } catch (err) {
    expect(err).toBeInstanceOf(OpenApiViolation);
    return (err as Error).message;
  }
  throw new Error('expected a violation');
};

describe('response validator', () => {
  it('accepts a documented answer and finds the operation by path template', () => {
    expect(() => validator.check(ok())).not.toThrow();
    expect(validator.operationFor('GET', '/universes/acme?x=1')?.template).toBe('/universes/{slug}');
    // dot segments are resolved as the client resolves them before sending
    expect(validator.operationFor('GET', '/universes/.')?.template).toBe('/universes');
  });

  it('fails on a missing documented field, naming operation and status', () => {
    const { isPersonal: _, ...partial } = universe;
    expect(violation(ok({ body: { universe: partial } }))).toMatch(
      /getUniverse \(GET \/universes\/\{slug\}\) answered 200 application\/json: \/universe lacks documented field 'isPersonal'/,
    );
  });

  it('fails on a wrong type and on an undocumented field of a closed object', () => {
    expect(violation(ok({ body: { universe: { ...universe, isPersonal: 'no' } } }))).toMatch(/\/universe\/isPersonal must be boolean/);
    expect(violation(ok({ body: { universe: { ...universe, owner: 'x' } } }))).toMatch(/undocumented field 'owner'/);
  });

  it('fails on an undocumented status and an undocumented content type', () => {
    expect(violation(ok({ status: 418, body: { error: { code: 'teapot', message: 'no' } } }))).toMatch(/status 418 is not documented/);
    expect(violation(ok({ contentType: 'text/plain', body: 'hi' }))).toMatch(/content type text\/plain is not documented/);
  });

  it('checks error bodies against the envelope, also outside the document', () => {
    expect(violation(ok({ status: 404, body: { message: 'nope' } }))).toMatch(/lacks documented field 'error'/);
    expect(() => validator.check(ok({ path: '/nowhere', status: 404, body: { error: { code: 'not_found', message: 'x' } } }))).not.toThrow();
    expect(() => validator.check(ok({ path: '/nowhere', status: 404, contentType: 'text/html', body: '<p>' }))).toThrow(/errors are JSON envelopes/);
  });
});

describe('event stream frames', () => {
  const stream = '/sessions/sess_x/events/stream';
  const running = { id: 'evt_1', type: 'session.status_running', sessionId: 'sess_x', agentId: null, at: '2026-01-01T00:00:00.000Z' };
  it('accepts a documented event whose id: and event: lines are its own', () => {
    expect(() => validator.checkEvent(stream, { id: 'evt_1', event: 'session.status_running', data: running })).not.toThrow();
  });
  it('fails on an event outside the schema and on frame lines that disagree with it', () => {
    expect(() => validator.checkEvent(stream, { id: 'evt_1', event: 'session.status_running', data: { ...running, extra: 1 } })).toThrow(OpenApiViolation);
    expect(() => validator.checkEvent(stream, { id: 'evt_2', event: 'session.status_running', data: running })).toThrow(/not its event's id and type/);
  });
});
