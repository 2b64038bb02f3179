// The README's quickstart, run as written: its ```sh blocks are taken from README.md and executed
// with bash against the service started as `npm start` starts it (its own process, an empty
// DATA_DIR, no ADMIN_PASSWORD and no provider key). The password is the one the start-up banner
// prints, typed into the quickstart's `read`; the agent uses the demo model, so the reply
// streams without any key. What curl printed is checked against the OpenAPI document.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../helpers/child-server.js';
import { ResponseValidator, type OpenApiDocument } from '../helpers/openapi-validator.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The fenced sh blocks of the README's "Quickstart" section, in order. */
function quickstartBlocks(): string[] {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Quickstart');
  if (start < 0) throw new Error('README.md has no "## Quickstart" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** SSE frames of a text: `id:`, `event:` and the parsed `data:`. */
function framesOf(text: string): { id: string | null; event: string | null; data: unknown }[] {
  return text.split(/\n\n+/).flatMap((chunk) => {
    const field = (name: string) =>
      chunk
        .split('\n')
        .find((l) => l.startsWith(`${name}: `))
        ?.slice(name.length + 2) ?? null;
    const data = field('data');
    return data === null ? [] : [{ id: field('id'), event: field('event'), data: JSON.parse(data) as unknown }];
  });
}

let server: ChildServer;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quickstart-'));
  const env: Record<string, string> = { DATA_DIR: path.join(dir, 'data'), STREAM_PING_MS: '200' };
  // A newcomer's machine: no owner password chosen, no model key, embedded database and queue.
  for (const name of ['ADMIN_PASSWORD', 'ADMIN_TOKEN', 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'DATABASE_URL', 'REDIS_URL']) env[name] = '';
  server = await startChildServer(env);
}, 90_000);

afterAll(async () => {
  await server?.kill();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the README quickstart', () => {
  it("runs block by block with bash and streams the demo model's reply", async () => {
    const curl = spawnSync('curl', ['--version'], { encoding: 'utf8' });
    expect(curl.status, 'the quickstart needs curl: apt-get install -y curl').toBe(0);
    const blocks = quickstartBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const password = /Sign in\s+\S+\s+password: (\S+)/.exec(server.output())?.[1];
    expect(password, `the banner prints the generated password:\n${server.output()}`).toBeTruthy();

    // Markers between the blocks tell their outputs apart; `-e` stops at the first failing command.
    const script = blocks.map((b, i) => `printf '\\n::block ${i}::\\n'\n${b}`).join('\n');
    const run = spawnSync('bash', ['-eu', '-c', script], {
      cwd: dir,
      input: `${password}\n`,
      env: { PATH: process.env.PATH ?? '', HOME: dir, BASE: server.url },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status, `bash exited ${run.status}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`).toBe(0);
    const outputs = run.stdout.split(/\n::block \d+::\n/).slice(1);
    expect(outputs).toHaveLength(blocks.length);

    const doc = (await (await fetch(`${server.base}/openapi.json`)).json()) as OpenApiDocument;
    const validator = new ResponseValidator(doc);
    const streamed = outputs.find((o) => o.includes('event: agent.message'));
    expect(streamed, `no block streamed an agent.message:\n${run.stdout}`).toBeDefined();
    const frames = framesOf(streamed!);
    for (const frame of frames) validator.checkEvent('/sessions/{id}/events/stream', frame);

    const messages = frames.filter((f) => f.event === 'agent.message').map((f) => f.data as { final: boolean; text: string });
    const chunks = messages.filter((m) => !m.final);
    const complete = messages.find((m) => m.final);
    expect(chunks.length).toBeGreaterThan(0);
    expect(complete?.text).toBe(chunks.map((c) => c.text).join(''));
    expect(complete?.text).toMatch(/^\[demo model: no provider was called, nothing was charged\] You said: \S/);
    const idle = frames.at(-1)?.data as { type: string; stop_reason?: { type: string } };
    expect(idle).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });

    // The history block prints the page of events: the same complete message is stored.
    const history = outputs.at(-1)!.trim().split('\n').at(-1)!;
    const page = JSON.parse(history) as { events: { type: string; final?: boolean; text?: string }[] };
    validator.check({ method: 'GET', path: '/sessions/x/events?limit=100', status: 200, contentType: 'application/json', body: page, empty: false });
    expect(page.events.filter((e) => e.type === 'agent.message' && e.final !== false).map((e) => e.text)).toContain(complete!.text);
  }, 180_000);
});
