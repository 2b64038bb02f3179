// Fuzz throughput for `npm run bench`: the fuzz suite's generated requests (every route except
// the SSE feeds, test/helpers/fuzz-requests.ts) sent by CONCURRENCY clients for a fixed time,
// every answer checked twice — the envelope rule (no 5xx, non-2xx exactly {error:{code,message}})
// and the OpenAPI document (test/helpers/openapi-validator.ts). Reports requests/s and counts.
import fc from 'fast-check';
import type { TestServer } from '../test/helpers/server.js';
import { routes } from '../rest/routes/index.js';
import { requestArbitrary, sendFuzzRequest, answerProblem, type FuzzRequest, type KnownIds } from '../test/helpers/fuzz-requests.js';
import { ResponseValidator, type OpenApiDocument } from '../test/helpers/openapi-validator.js';

const SECONDS = Number(process.env.BENCH_FUZZ_SECONDS || 10);
const CONCURRENCY = 8;
const PER_ROUTE = 20;

export async function fuzzBench(s: TestServer): Promise<[string, string][]> {
  const agent = (await s.api('POST', '/agents', { body: { displayName: 'Fuzz bench' } })).body.agent;
  const session = (await s.api('POST', '/sessions', { body: { agent: agent.id } })).body.session;
  const known: KnownIds = { 'agents/{id}': [agent.id], 'sessions/{id}': [session.id, agent.id], 'model-subscriptions/{provider}': ['anthropic', 'openai'] };
  // Generated once (fixed seeds), so the loop measures the service, not the generators.
  const pool: FuzzRequest[] = routes
    .filter((r) => !r.feed)
    .flatMap((r, i) => fc.sample(requestArbitrary(r, known, s.adminToken), { seed: 4242 + i, numRuns: PER_ROUTE }));
  const validator = new ResponseValidator((await (await fetch(`${s.base}/openapi.json`)).json()) as OpenApiDocument);

  let sent = 0;
  let envelopeViolations = 0;
  let documentViolations = 0;
  let next = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  const client = async () => {
    while (performance.now() < deadline) {
      const req = pool[next++ % pool.length]!;
      const answer = await sendFuzzRequest(s.base, req).catch(() => null);
      sent++;
      if (!answer || answerProblem(answer)) {
        envelopeViolations++;
        continue;
      }
      let body: unknown = answer.text;
      try {
        body = JSON.parse(answer.text);
      } catch {
        /* not JSON: checked as text */
      }
      try {
        validator.check({
          method: req.method,
          path: req.target,
          status: answer.status,
          contentType: answer.contentType,
          body,
          empty: answer.text.length === 0,
        });
      } catch (err) {
        documentViolations++;
        if (process.env.BENCH_VERBOSE) console.error((err as Error).message.slice(0, 500));
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
  const rps = sent / ((performance.now() - started) / 1000);
  return [
    [
      `fuzz throughput: generated requests to all ${routes.filter((r) => !r.feed).length} non-stream routes, ${CONCURRENCY} concurrent, ${SECONDS} s; every answer checked (envelope + OpenAPI)`,
      `${rps.toFixed(0)} req/s (${sent} requests); 5xx or broken envelope ${envelopeViolations}; answers the OpenAPI document does not describe ${documentViolations}`,
    ],
  ];
}
