// A CLI engine's model calls join its turn's trace: the CLI (here the real pi CLI in the jail)
// calls the service's HTTP gateway without a `traceparent`, and the gateway parents the `chat`
// span on the running turn's `invoke_agent` span, as hermes' model calls are.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ENGINE_CASES, startCliEngineServer } from '../helpers/cli-engines.js';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { readySession, sendText, waitFor, waitForEvents } from '../helpers/sessions.js';
import { flushTracing } from '../../src/telemetry/tracing.js';
import { prisma } from '../../src/db/client.js';

const c = CLI_ENGINE_CASES.find((x) => x.agentType === 'pi')!;

describe('the trace of a CLI engine turn (pi)', () => {
  let s: TestServer;
  let fake: FakeProvider;
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    ({ s, fake } = await startCliEngineServer(c.agentType, { otelTracesEndpoint: receiver.url }));
  }, 900_000);
  afterAll(async () => {
    await s?.stop();
    await fake?.close();
    await receiver?.close();
  });

  it("puts the gateway's model call spans under the turn span, with the metered tokens", async () => {
    const { session } = await readySession(s, { agentType: c.agentType, llm: c.llm });
    fake.enqueue({ kind: 'text', text: 'traced reply', usage: { inputTokens: 321, outputTokens: 9 } });
    const traceId = randomBytes(16).toString('hex');
    const sent = await sendText(s, session.id, 'hello', { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` });
    expect(sent.status).toBe(202);
    await waitForEvents(s, session.id, 'session.status_idle', 1, 120_000);
    let spans: ReceivedSpan[] = [];
    await waitFor(
      async () => {
        await flushTracing();
        spans = receiver.spans.filter((x) => x.traceId === traceId);
        return spans.some((x) => x.name.startsWith('chat ')) && spans.some((x) => x.name === `invoke_agent ${c.agentType}`);
      },
      15_000,
      `the chat span in trace ${traceId}`,
    );
    const turn = spans.find((x) => x.name === `invoke_agent ${c.agentType}`)!;
    const chats = spans.filter((x) => x.name.startsWith('chat '));
    const usage = await prisma.modelUsage.findMany({ where: { sessionId: session.id } });
    expect(chats).toHaveLength(usage.length);
    for (const chat of chats) {
      expect(chat.parentSpanId).toBe(turn.spanId);
      expect(chat.attributes['agent_service.session.id']).toBe(session.id);
    }
    expect(chats.map((x) => x.attributes['gen_ai.usage.input_tokens'])).toContain(usage[0]!.inputTokens);
  });
});
