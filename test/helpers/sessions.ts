// Helpers for session tests: create an agent and a ready session, wait for events, read SSE.
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { Config } from '../../src/config.js';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startTestServer, type TestServer } from './server.js';
import { validatorForUrl } from './openapi-validator.js';

/** The config sending a server's Anthropic calls (and, with `openai`, its OpenAI calls) to the fake provider. */
export function onFakeProvider(fake: FakeProvider, opts: { openai?: boolean } = {}): Partial<Config> {
  return {
    anthropicApiKey: 'sk-ant-test',
    anthropicBaseUrl: fake.anthropicBaseUrl,
    ...(opts.openai ? { openaiApiKey: 'sk-openai-test', openaiBaseUrl: fake.openaiBaseUrl } : {}),
  };
}

/**
 * A test file's server on the fake provider, as hooks: before all, `env` is set, a fake provider
 * starts and a test server whose model calls go to it (see onFakeProvider); `use` receives both.
 * The provider's script is reset before each test; the server, then the provider, stop after all.
 */
export function withServerOnFakeProvider(
  use: (started: { s: TestServer; fake: FakeProvider }) => void,
  opts: { openai?: boolean; env?: Record<string, string> } = {},
): void {
  let s: TestServer | undefined;
  let fake: FakeProvider | undefined;
  beforeAll(async () => {
    Object.assign(process.env, opts.env);
    fake = await startFakeProvider();
    s = await startTestServer(onFakeProvider(fake, opts));
    use({ s, fake });
  });
  afterAll(async () => {
    await s?.stop();
    await fake?.close();
  });
  beforeEach(() => fake!.reset());
}

export async function readySession(s: TestServer, agentBody: Record<string, unknown> = {}, sessionBody: Record<string, unknown> = {}) {
  const agent = (await s.api('POST', '/agents', { body: agentBody })).body.agent;
  const created = await s.api('POST', '/sessions', { body: { agent: agent.id, ...sessionBody } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const session = created.body.session;
  await waitFor(async () => (await s.api('GET', `/sessions/${session.id}`)).body.session.status !== 'provisioning');
  return { agent, session };
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export async function history(s: TestServer, sessionId: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  for (;;) {
    const page: any = await s.api('GET', `/sessions/${sessionId}/events?limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
    out.push(...page.body.events);
    if (!page.body.hasMore) return out;
    cursor = page.body.cursor;
  }
}

/** Waits until the history holds `count` events of `type`. */
export async function waitForEvents(s: TestServer, sessionId: string, type: string, count = 1, timeoutMs = 10_000): Promise<any[]> {
  let events: any[] = [];
  await waitFor(
    async () => {
      events = await history(s, sessionId);
      return events.filter((e) => e.type === type).length >= count;
    },
    timeoutMs,
    `${count} × ${type}`,
  );
  return events;
}

export function sendText(s: TestServer, sessionId: string, text: string, headers?: Record<string, string>) {
  return s.api('POST', `/sessions/${sessionId}/events`, { body: { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] }, headers });
}

export interface SseFrame {
  id: string | null;
  event: string | null;
  data: any;
}

/** Opens the session's SSE stream; collect frames until `until` says stop. */
export async function collectSse(
  url: string,
  token: string,
  until: (frames: SseFrame[]) => boolean,
  opts: { headers?: Record<string, string>; timeoutMs?: number; onOpen?: () => void } = {},
): Promise<SseFrame[]> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), opts.timeoutMs ?? 10_000);
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, ...opts.headers }, signal: ctl.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  opts.onOpen?.();
  const documented = await validatorForUrl(url); // each frame is checked against the stream's event schema
  const frames: SseFrame[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    while (!until(frames)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let sep: number;
      while ((sep = buffer.indexOf('\n\n')) !== -1) {
        const raw = buffer.slice(0, sep);
        buffer = buffer.slice(sep + 2);
        const frame: SseFrame = { id: null, event: null, data: null };
        let isData = false;
        for (const line of raw.split('\n')) {
          if (line.startsWith('id: ')) frame.id = line.slice(4);
          else if (line.startsWith('event: ')) frame.event = line.slice(7);
          else if (line.startsWith('data: ')) {
            frame.data = JSON.parse(line.slice(6));
            isData = true;
          }
        }
        if (isData) {
          documented?.validator.checkEvent(documented.path, frame);
          frames.push(frame);
        }
      }
    }
  } catch (err) {
    if (!ctl.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
    ctl.abort();
  }
  return frames;
}
