// Turns end to end through HTTP with the fake provider: streaming text, tools in the jailed
// sandbox, queued messages, interrupt, provider failures, history paging, SSE resume,
// GraphQL subscriptions over graphql-sse, the OpenAI wire format, a missing key.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient } from 'graphql-sse';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents, waitFor, history, collectSse } from '../helpers/sessions.js';
import { config } from '../../src/config.js';

let s: TestServer;
let fake: FakeProvider;
beforeAll(async () => {
  process.env.MODEL_RETRY_BASE_MS = '20';
  fake = await startFakeProvider();
  s = await startTestServer({
    anthropicApiKey: 'sk-ant-test',
    anthropicBaseUrl: fake.anthropicBaseUrl,
    openaiApiKey: 'sk-openai-test',
    openaiBaseUrl: fake.openaiBaseUrl,
  });
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

const types = (events: any[]) => events.map((e) => e.type);

describe('a text turn', () => {
  it('streams agent.message chunks and ends idle with end_turn; history has the whole conversation', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'Hello there, human friend!', chunks: 5 });
    const sent = await sendText(s, session.id, 'hi');
    expect(sent.status).toBe(202);
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(types(events)[0]).toBe('user.message');
    expect(types(events)[1]).toBe('session.status_running');
    expect(types(events).at(-1)).toBe('session.status_idle');
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
    const messages = events.filter((e) => e.type === 'agent.message');
    const final = messages.find((m) => m.final);
    expect(final.text).toBe('Hello there, human friend!');
    expect(final.parts[0]).toMatchObject({ type: 'text', index: 0, text: 'Hello there, human friend!', stream_id: final.messageId });
    const chunks = messages.filter((m) => !m.final);
    expect(chunks.map((m) => m.text).join('')).toBe('Hello there, human friend!');
    expect(chunks.map((m) => m.parts[0].stream_index)).toEqual(chunks.map((_, i) => i));
    // The model got the system prompt, the tools and the user's words.
    const body = fake.requests[0]!.body;
    expect(body.model).toBe('claude-sonnet-4-5');
    expect(body.tools.map((t: any) => t.name).sort()).toEqual(['bash', 'edit_file', 'read_file', 'write_file']);
    expect(body.messages).toMatchObject([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]); // plus a cache breakpoint
    expect(fake.requests[0]!.headers['x-api-key']).toBe('sk-ant-test');
    await waitFor(async () => (await s.api('GET', `/sessions/${session.id}`)).body.session.status === 'idle');
  });

  it('keeps the conversation across turns, and the system prompt carries prompt and instructions', async () => {
    const { session } = await readySession(
      s,
      { prompt: 'You are Zed.', instructions: [{ name: 'RULES.md', content: 'Always rhyme.' }] },
      { instructions: [{ name: 'SESSION.md', content: 'Be short.' }] },
    );
    fake.enqueue({ kind: 'text', text: 'first answer' }, { kind: 'text', text: 'second answer' });
    await sendText(s, session.id, 'one');
    await waitForEvents(s, session.id, 'session.status_idle');
    await sendText(s, session.id, 'two');
    await waitForEvents(s, session.id, 'session.status_idle', 2);
    const second = fake.requests[1]!.body;
    expect(second.messages).toMatchObject([
      { role: 'user', content: [{ type: 'text', text: 'one' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'first answer' }] },
      { role: 'user', content: [{ type: 'text', text: 'two' }] },
    ]);
    expect(second.system[0].text).toContain('You are Zed.');
    expect(second.system[0].text).toContain('Always rhyme.');
    expect(second.system[0].text).toContain('Be short.');
  });

  it('reasoning streams as agent.reasoning and reasoningEffort turns on extended thinking', async () => {
    const { session } = await readySession(s, { reasoningEffort: 'high' });
    fake.enqueue({ kind: 'reasoning_then_text', reasoning: 'Let me think about it.', text: 'Answer.' });
    await sendText(s, session.id, 'think');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const reasoning = events.filter((e) => e.type === 'agent.reasoning');
    expect(reasoning.find((e) => e.final).part).toMatchObject({ type: 'reasoning', text: 'Let me think about it.', redacted: false });
    expect(fake.requests[0]!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
  });
});

describe('a tool turn', () => {
  it('writes a file in /workspace through bash and write_file; the jail cannot see host files', async () => {
    const secretFile = path.join(os.tmpdir(), `host-secret-${Date.now()}.txt`);
    fs.writeFileSync(secretFile, 'HOST ONLY');
    const { session } = await readySession(s);
    fake.enqueue(
      { kind: 'tool_call', name: 'write_file', input: { path: 'notes/hello.txt', content: 'hello from the agent' } },
      {
        kind: 'tool_call',
        name: 'bash',
        input: { command: `cat /workspace/notes/hello.txt; echo; cat ${secretFile}; echo "key=$ANTHROPIC_API_KEY"; ls /work 2>&1 | head -1` },
      },
      { kind: 'text', text: 'All done.' },
    );
    await sendText(s, session.id, 'list the files in /workspace and write hello.txt');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(types(events)).toEqual(expect.arrayContaining(['agent.tool_use', 'agent.tool_result']));
    const results = events.filter((e) => e.type === 'agent.tool_result');
    expect(results[0].part).toMatchObject({ type: 'tool_result', tool_name: 'write_file', status: 'ok', result: { bytes_written: 20 } });
    const bash = results[1].part.result;
    expect(bash.stdout).toContain('hello from the agent');
    expect(bash.stdout).not.toContain('HOST ONLY');
    expect(bash.stdout).toContain('key=\n');
    const uses = events.filter((e) => e.type === 'agent.tool_use');
    expect(uses[0].part).toMatchObject({ type: 'tool_call', tool_name: 'write_file', args: { path: 'notes/hello.txt', content: 'hello from the agent' } });
    const onHost = path.join(config().dataDir, 'sandboxes', session.id, 'workspace', 'notes', 'hello.txt');
    expect(fs.readFileSync(onHost, 'utf8')).toBe('hello from the agent');
    // The provider saw the tool results as tool_result blocks.
    expect(fake.requests[1]!.body.messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', tool_use_id: uses[0].part.call_id });
    fs.rmSync(secretFile);
  });
});

describe('queueing and interrupts', () => {
  it('a message sent while a turn runs is queued and starts the next turn', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'slow first', chunks: 10, delayMs: 40 }, { kind: 'text', text: 'second turn' });
    await sendText(s, session.id, 'first');
    await waitFor(async () => (await s.api('GET', `/sessions/${session.id}`)).body.session.status === 'running');
    await sendText(s, session.id, 'second');
    const events = await waitForEvents(s, session.id, 'session.status_idle', 2);
    expect(types(events).filter((t) => t.startsWith('session.status'))).toEqual([
      'session.status_running',
      'session.status_idle',
      'session.status_running',
      'session.status_idle',
    ]);
    // The second turn's model call saw the first answer before the queued message.
    const msgs = fake.requests[1]!.body.messages;
    expect(msgs.map((m: any) => m.content[0].text)).toEqual(['first', 'slow first', 'second']);
  });

  it('interrupt mid-stream: interrupting, user.interrupt, then idle end_turn within a second', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'hang', text: 'partial' });
    await sendText(s, session.id, 'go on forever');
    await waitForEvents(s, session.id, 'agent.message');
    const started = Date.now();
    const res = await s.api('POST', `/sessions/${session.id}/interrupt`);
    expect(res.body).toEqual({ status: 'interrupting' });
    const events = await waitForEvents(s, session.id, 'session.status_idle', 1, 3000);
    expect(Date.now() - started).toBeLessThan(1000);
    const i = types(events).indexOf('user.interrupt');
    expect(i).toBeGreaterThan(0);
    expect(events[i].by).toMatch(/^token:/);
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    await waitFor(async () => (await s.api('GET', `/sessions/${session.id}`)).body.session.status === 'idle');
    expect((await s.api('POST', `/sessions/${session.id}/interrupt`)).body).toEqual({ status: 'no_turn' });
  });

  it('user.interrupt sent as an event stops a running tool', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'sleep 30' } });
    await sendText(s, session.id, 'sleep');
    await waitForEvents(s, session.id, 'agent.tool_use');
    const res = await s.api('POST', `/sessions/${session.id}/events`, { body: { events: [{ type: 'user.interrupt' }] } });
    expect(res.status).toBe(202);
    expect(res.body.data[0]).toMatchObject({ type: 'user.interrupt' });
    const events = await waitForEvents(s, session.id, 'session.status_idle', 1, 3000);
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
  });
});

describe('the end of a turn', () => {
  // The idle event and the row's release are one statement: a client acting on the idle frame
  // (here: archive, which a running session refuses) never meets the row still running.
  it('a session whose stream says idle accepts an archive at once, every time', async () => {
    for (let i = 0; i < 8; i++) {
      const { session } = await readySession(s);
      fake.enqueue({ kind: 'text', text: `answer ${i}` });
      const url = `${s.base}/sessions/${session.id}/events/stream`;
      await collectSse(url, s.adminToken, (f) => f.some((x) => x.event === 'session.status_idle'), { onOpen: () => void sendText(s, session.id, 'go') });
      const archived = await s.api('POST', `/sessions/${session.id}/archive`);
      expect(archived.status, `round ${i}`).toBe(200);
      expect(archived.body.session.status).toBe('terminated');
    }
  });
});

describe('a sandbox that is gone', () => {
  it("the next turn starts a new one and says so (agent.status working) before the engine's events", async () => {
    const { session } = await readySession(s);
    const { sandboxDriver } = await import('../../src/sandbox/current-driver.js');
    await sandboxDriver().destroy(session.id);
    expect(await sandboxDriver().get(session.id)).toBeNull();
    fake.enqueue({ kind: 'text', text: 'on a new sandbox' });
    await sendText(s, session.id, 'hello again');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const status = events.find((e) => e.type === 'agent.status');
    expect(status.part).toEqual({ type: 'status', index: 0, level: 'working', text: expect.stringContaining('starting a new sandbox') });
    const order = types(events);
    expect(order.indexOf('session.status_running')).toBeLessThan(events.indexOf(status));
    expect(events.indexOf(status)).toBeLessThan(order.indexOf('agent.message'));
    expect(events.filter((e) => e.type === 'agent.message' && e.final).map((e) => e.text)).toEqual(['on a new sandbox']);
  });
});

describe('provider failures', () => {
  it('500s are retried (session.error retrying), then exhausted, then idle retries_exhausted', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'error', status: 500 }, { kind: 'error', status: 503 }, { kind: 'error', status: 500 });
    await sendText(s, session.id, 'hello');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const errors = events.filter((e) => e.type === 'session.error');
    expect(errors.map((e) => e.error.retry_status)).toEqual(['retrying', 'retrying', 'exhausted']);
    expect(errors[0].error).toMatchObject({ type: 'provider_unavailable', message: expect.stringContaining('500') });
    expect(events.at(-1).stop_reason).toEqual({ type: 'retries_exhausted' });
    // Each session.error is followed by its `error` message part (agent.status); retryable while the turn goes on.
    for (const error of errors) {
      const next = events[events.indexOf(error) + 1];
      expect(next).toMatchObject({
        type: 'agent.status',
        part: { type: 'error', index: 0, code: error.error.type, message: error.error.message, retryable: error.error.retry_status === 'retrying' },
      });
    }
    // Before each retry the turn says it waits (a `status` part), not after the last failure.
    const waits = events.filter((e) => e.type === 'agent.status' && e.part.type === 'status');
    expect(waits.map((e) => [e.part.level, e.part.text])).toEqual([
      ['waiting', expect.stringMatching(/^retrying the model call in \d+ s \(attempt 2 of 3\)$/)],
      ['waiting', expect.stringMatching(/\(attempt 3 of 3\)$/)],
    ]);
  });

  it('a retry that succeeds continues the turn', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'error', status: 529 }, { kind: 'text', text: 'recovered' });
    await sendText(s, session.id, 'hello');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(events.filter((e) => e.type === 'session.error').map((e) => e.error.retry_status)).toEqual(['retrying']);
    expect(events.filter((e) => e.type === 'agent.status').map((e) => e.part)).toEqual([
      { type: 'error', index: 0, code: 'provider_unavailable', message: expect.any(String), retryable: true },
      { type: 'status', index: 0, level: 'waiting', text: expect.stringContaining('attempt 2 of 3') },
    ]);
    expect(events.at(-1).stop_reason).toEqual({ type: 'end_turn' });
  });

  it('a 401 from the provider is not retried', async () => {
    const { session } = await readySession(s);
    fake.rejectKeys.add('sk-ant-test');
    await sendText(s, session.id, 'hello');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    const errors = events.filter((e) => e.type === 'session.error');
    expect(errors).toHaveLength(1);
    expect(errors[0].error).toMatchObject({ type: 'provider_auth', retry_status: 'exhausted' });
  });
});

describe('OpenAI models', () => {
  it('runs a tool turn over the Chat Completions wire format', async () => {
    const { session } = await readySession(s, { llm: 'gpt-4.1' }); // the catalog sends gpt-4.1 over Chat Completions (gpt-5: test/gateway/responses.test.ts)
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'echo from-openai > o.txt && cat o.txt' } }, { kind: 'text', text: 'openai done' });
    await sendText(s, session.id, 'do it');
    const events = await waitForEvents(s, session.id, 'session.status_idle');
    expect(events.find((e) => e.type === 'agent.tool_result').part.result.stdout).toBe('from-openai\n');
    expect(events.find((e) => e.type === 'agent.message' && e.final).text).toBe('openai done');
    expect(fake.requests[0]!.path).toBe('/v1/chat/completions');
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer sk-openai-test');
    expect(fake.requests[1]!.body.messages.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('from-openai') });
  });
});

describe('history and streams', () => {
  it('pages history oldest first with cursor and hasMore', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'a' }, { kind: 'text', text: 'b' });
    await sendText(s, session.id, 'one');
    await waitForEvents(s, session.id, 'session.status_idle');
    await sendText(s, session.id, 'two');
    const all = await waitForEvents(s, session.id, 'session.status_idle', 2);
    const seen: string[] = [];
    let cursor: string | null = null;
    for (;;) {
      const page: any = await s.api('GET', `/sessions/${session.id}/events?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.body.events.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.events.map((e: any) => e.id));
      if (!page.body.hasMore) {
        expect(page.body.cursor).toBe(seen.at(-1));
        break;
      }
      cursor = page.body.cursor;
    }
    expect(seen).toEqual(all.map((e) => e.id));
    const empty = await readySession(s);
    expect((await s.api('GET', `/sessions/${empty.session.id}/events`)).body).toEqual({ events: [], cursor: null, hasMore: false });
    expect((await s.api('GET', `/sessions/${session.id}/events?limit=0`)).status).toBe(400);
    expect((await s.api('GET', `/sessions/${session.id}/events?cursor=evt_unknown`)).status).toBe(400);
  });

  it('the SSE stream carries live events (never user.message) and resumes after Last-Event-ID with no gap or duplicate', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'streamed words', chunks: 4 });
    const url = `${s.base}/sessions/${session.id}/events/stream`;
    const live = collectSse(url, s.adminToken, (f) => f.some((x) => x.event === 'session.status_idle'), {
      onOpen: () => void sendText(s, session.id, 'stream it'),
    });
    const frames = await live;
    expect(frames.map((f) => f.event)).not.toContain('user.message');
    expect(frames[0]!.event).toBe('session.status_running');
    for (const f of frames) {
      expect(f.id).toBe(f.data.id);
      expect(f.event).toBe(f.data.type);
    }
    const stored = (await history(s, session.id)).filter((e) => e.type !== 'user.message');
    expect(frames.map((f) => f.id)).toEqual(stored.map((e) => e.id));

    // Resume from the second frame: exactly the rest, then live events of a new turn.
    fake.enqueue({ kind: 'text', text: 'more' });
    const after = frames[1]!.id!;
    const resumed = await collectSse(url, s.adminToken, (f) => f.filter((x) => x.event === 'session.status_idle').length >= 2, {
      headers: { 'last-event-id': after },
      onOpen: () => void sendText(s, session.id, 'again'),
    });
    const expected = (await history(s, session.id)).filter((e) => e.type !== 'user.message');
    const from = expected.findIndex((e) => e.id === after) + 1;
    expect(resumed.map((f) => f.id)).toEqual(expected.slice(from).map((e) => e.id));
    const viaQuery = await collectSse(`${url}?after=${after}`, s.adminToken, (f) => f.length >= expected.length - from);
    expect(viaQuery.map((f) => f.id)).toEqual(expected.slice(from).map((e) => e.id));
  });

  it('stream errors are enveloped before the stream starts', async () => {
    const res = await s.fetch(`/sessions/sess_nope/events/stream`, { headers: { authorization: `Bearer ${s.adminToken}` } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
    const noAuth = await s.fetch(`/sessions/sess_nope/events/stream`);
    expect(noAuth.status).toBe(401);
    expect((await noAuth.json()).error.code).toBe('invalid_token');
  });

  it('a GraphQL subscription over graphql-sse receives the turn', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'text', text: 'to the subscriber' });
    const client = createClient({ url: `${s.url}/graphql/stream`, headers: { authorization: `Bearer ${s.adminToken}` }, retryAttempts: 0 });
    const received: any[] = [];
    await new Promise<void>((resolve, reject) => {
      let sent = false;
      const dispose = client.subscribe<{ sessionEvents: { __typename: string; type: string; final?: boolean; text?: string } }>(
        {
          query: `subscription($id: String!) { sessionEvents(sessionId: $id) {
            __typename
            ... on SessionStatusRunningEvent { id type }
            ... on SessionStatusIdleEvent { id type stopReason { type } }
            ... on AgentMessageEvent { id type final text }
          } }`,
          variables: { id: session.id },
        },
        {
          next: (r) => {
            if (r.errors) return reject(new Error(JSON.stringify(r.errors)));
            received.push(r.data!.sessionEvents);
            if (r.data!.sessionEvents.type === 'session.status_idle') {
              dispose();
              resolve();
            }
          },
          error: reject,
          complete: () => resolve(),
        },
      );
      // graphql-sse has no "subscribed" callback: send once the server is listening.
      setTimeout(() => {
        if (!sent) {
          sent = true;
          void sendText(s, session.id, 'hi subscriber');
        }
      }, 300);
    });
    client.dispose();
    expect(received.map((e) => e.type)).toEqual(expect.arrayContaining(['session.status_running', 'agent.message', 'session.status_idle']));
    expect(received.find((e) => e.__typename === 'AgentMessageEvent' && e.final)!.text).toBe('to the subscriber');
  });
});

describe('without a provider key', () => {
  it('the turn ends with a session.error naming the missing setting', async () => {
    const { session } = await readySession(s, { llm: 'gpt-5' });
    const saved = config().openaiApiKey;
    config().openaiApiKey = undefined;
    try {
      await sendText(s, session.id, 'hello');
      const events = await waitForEvents(s, session.id, 'session.status_idle');
      const err = events.find((e) => e.type === 'session.error');
      expect(err.error).toMatchObject({ type: 'provider_not_configured', retry_status: 'exhausted', message: expect.stringContaining('OPENAI_API_KEY') });
    } finally {
      config().openaiApiKey = saved;
    }
  });
});
