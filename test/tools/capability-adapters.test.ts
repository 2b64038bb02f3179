// The capability adapters whose vendors could not be reached from here (TinyFish, DataForSEO,
// rembg, Seedance, MiniMax, Fish Audio), run end to end against fakes written from the vendors'
// published API descriptions: request shape and credential, answer parsing, task polling,
// media inputs (sandbox path, session file), produced files, and the units priced.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { readySession } from '../helpers/sessions.js';
import { startOtherVendors, type OtherVendors, FAKE_MP4 } from '../fake-vendors/other-vendors.js';
import { TINY_PNG } from '../fake-vendors/mcp-server.js';
import { capabilityById, runCapability } from '../../src/tools/capabilities/run.js';
import { sandboxDriver } from '../../src/sandbox/current-driver.js';
import { prisma } from '../../src/db/client.js';
import type { CapabilityId } from '../../src/catalog/capability-ids.js';

const KEYS = { tinyfish: 'tf-key', dataforseo: 'login@example.test:pw', seedance: 'ark-key', minimax: 'mm-key', fish: 'fish-key' };
let s: TestServer;
let v: OtherVendors;
let scope: Parameters<typeof runCapability>[2];

beforeAll(async () => {
  process.env.OUTBOUND_ALLOW = '127.0.0.0/8';
  process.env.CAPABILITY_POLL_MS = '10';
  v = await startOtherVendors(KEYS);
  const [login, password] = KEYS.dataforseo.split(':');
  Object.assign(process.env, {
    TINYFISH_API_KEY: KEYS.tinyfish,
    TINYFISH_FETCH_BASE_URL: `${v.base}/tinyfish-fetch`,
    TINYFISH_AGENT_BASE_URL: `${v.base}/tinyfish-agent`,
    DATAFORSEO_LOGIN: login,
    DATAFORSEO_PASSWORD: password,
    DATAFORSEO_BASE_URL: `${v.base}/dataforseo`,
    REMBG_BASE_URL: `${v.base}/rembg`,
    SEEDANCE_API_KEY: KEYS.seedance,
    SEEDANCE_BASE_URL: `${v.base}/ark`,
    MINIMAX_API_KEY: KEYS.minimax,
    MINIMAX_BASE_URL: `${v.base}/minimax`,
    FISH_AUDIO_API_KEY: KEYS.fish,
    FISH_AUDIO_BASE_URL: `${v.base}/fish`,
  });
  s = await startTestServer();
  const { session } = await readySession(s);
  const row = await prisma.session.findUniqueOrThrow({ where: { id: session.id } });
  const sandbox = (await sandboxDriver().get(session.id))!;
  scope = { sessionId: session.id, universeId: row.universeId, turn: 1, sandbox, granted: [], signal: new AbortController().signal };
});
afterAll(async () => {
  await s?.stop();
  await v?.close();
});

const run = (id: CapabilityId, input: unknown) => runCapability(capabilityById(id), input, { ...scope, granted: [id] });
const lastUsage = () => prisma.modelUsage.findFirst({ where: { sessionId: scope.sessionId }, orderBy: { createdAt: 'desc' } });

describe('adapters written from published APIs (not exercised against the vendors)', () => {
  it('tinyfish.fetch and tinyfish.browser', async () => {
    const fetched = await run('tinyfish.fetch', { urls: ['https://a.example/', 'https://bad.example/'] });
    expect(fetched).toEqual({
      status: 'ok',
      result: {
        results: [{ url: 'https://a.example/', title: 'T', description: 'D', text: '# page https://a.example/' }],
        errors: [{ url: 'https://bad.example/', error: 'target_http_error', status: 500 }],
      },
    });
    expect(v.requests.at(-1)!.headers['x-api-key']).toBe(KEYS.tinyfish);
    const browsed = await run('tinyfish.browser', { url: 'https://shop.example/', goal: 'find the price' });
    expect(browsed).toEqual({ status: 'ok', result: { run_id: 'run_1', steps: 3, result: { price: '$12' } } });
    expect(JSON.parse(v.requests.at(-1)!.body.toString())).toEqual({
      url: 'https://shop.example/',
      goal: 'find the price',
      browser_profile: 'lite',
      agent_config: { max_steps: 50 },
    });
    expect(await lastUsage()).toMatchObject({ model: 'tinyfish.browser', costNanoUsd: 48_000_000n });
    // A failed run still used (and is charged for) its steps.
    const failed = await run('tinyfish.browser', { url: 'https://shop.example/', goal: 'the impossible' });
    expect(failed).toMatchObject({ status: 'error', result: { error: 'tinyfish.browser: the browser agent ended FAILED: could not reach the goal' } });
    expect(await lastUsage()).toMatchObject({ model: 'tinyfish.browser', costNanoUsd: 48_000_000n });
  });

  it('dataforseo.serp', async () => {
    const out = await run('dataforseo.serp', { keyword: 'agent platform' });
    expect(out).toEqual({
      status: 'ok',
      result: {
        keyword: 'agent platform',
        total_results: 1234,
        results: [{ rank: 1, rank_absolute: 2, title: 'First', url: 'https://first.example/', description: 'the first', domain: 'first.example' }],
      },
    });
    expect(JSON.parse(v.requests.at(-1)!.body.toString())).toEqual([
      { keyword: 'agent platform', location_code: 2840, language_code: 'en', depth: 10, device: 'desktop' },
    ]);
    expect(await lastUsage()).toMatchObject({ model: 'dataforseo.serp', costNanoUsd: 2_000_000n });
  });

  it('rembg.remove-background reads a sandbox file and stores the cut-out; mm.i2v animates it by file id', async () => {
    await scope.sandbox.writeFile('/workspace/photo.png', TINY_PNG);
    const cut = await run('rembg.remove-background', { image: { path: 'photo.png' } });
    expect(cut).toMatchObject({
      status: 'ok',
      result: { source: 'photo.png', files: [{ filename: 'photo-cutout.png', mime_type: 'image/png', size_bytes: TINY_PNG.length }] },
    });
    expect(cut.attachments![0]).toMatchObject({ type: 'image', media_type: 'image/png' });
    const fileId = (cut.result.files as { file_id: string }[])[0]!.file_id;

    const video = await run('mm.i2v', { image: { file_id: fileId }, prompt: 'a slow zoom' });
    expect(video).toMatchObject({
      status: 'ok',
      result: { task_id: 'mm-1', resolution: '768P', duration_seconds: 6, files: [{ mime_type: 'video/mp4', size_bytes: FAKE_MP4.length }] },
    });
    expect(video.attachments![0]).toMatchObject({ type: 'video', media_type: 'video/mp4', width: 1366, height: 768, duration_ms: 6000 });
    const submitted = JSON.parse(v.requests.find((r) => r.path === '/minimax/video_generation')!.body.toString());
    expect(submitted).toMatchObject({
      model: 'MiniMax-Hailuo-02',
      prompt: 'a slow zoom',
      duration: 6,
      resolution: '768P',
      first_frame_image: `data:image/png;base64,${TINY_PNG.toString('base64')}`,
    });
    expect(await lastUsage()).toMatchObject({ model: 'mm.i2v', costNanoUsd: 280_000_000n });
    const files = await s.api('GET', `/files?scope_id=${scope.sessionId}`);
    expect(files.body.data.map((f: any) => f.mime_type).sort()).toEqual(['image/png', 'video/mp4']);
  });

  it('seedance.generate polls its task and stores the video', async () => {
    const out = await run('seedance.generate', { prompt: 'waves at dusk', duration_seconds: 5, resolution: '1080p' });
    expect(out).toMatchObject({ status: 'ok', result: { task_id: 'cgt-1', files: [{ mime_type: 'video/mp4' }] } });
    const sent = JSON.parse(v.requests.find((r) => r.path === '/ark/contents/generations/tasks')!.body.toString());
    expect(sent).toEqual({ model: 'seedance-1-0-pro-250528', content: [{ type: 'text', text: 'waves at dusk --resolution 1080p --duration 5 --ratio 16:9' }] });
    expect(await lastUsage()).toMatchObject({ model: 'seedance.generate', costNanoUsd: 620_000_000n });
  });

  it('fish-audio.transcribe sends the audio as multipart and is priced per started minute', async () => {
    await scope.sandbox.writeFile('/workspace/memo.wav', Buffer.from('RIFF....WAVEfmt '));
    const out = await run('fish-audio.transcribe', { audio: { path: 'memo.wav' }, language: 'en' });
    expect(out).toEqual({
      status: 'ok',
      result: {
        text: 'hello world',
        duration_seconds: 75.2,
        segments: [
          { text: 'hello', start: 0, end: 0.5 },
          { text: 'world', start: 0.5, end: 1.1 },
        ],
      },
    });
    const req = v.requests.find((r) => r.path === '/fish/v1/asr')!;
    expect(req.headers.authorization).toBe(`Bearer ${KEYS.fish}`);
    expect(req.body.toString()).toContain('name="language"');
    expect(await lastUsage()).toMatchObject({ model: 'fish-audio.transcribe', costNanoUsd: 12_000_000n });
  });

  it('a media input that is not there is a tool error, charging nothing', async () => {
    const before = await prisma.modelUsage.count({ where: { sessionId: scope.sessionId } });
    expect(await run('rembg.remove-background', { image: { path: 'nope.png' } })).toMatchObject({
      status: 'error',
      result: { error: 'rembg.remove-background: no file at nope.png' },
    });
    expect(await run('rembg.remove-background', { image: { path: 'a.png', url: 'https://x.example/a.png' } })).toMatchObject({
      status: 'error',
      result: { error: expect.stringContaining('exactly one of file_id, path, url') },
    });
    expect(await prisma.modelUsage.count({ where: { sessionId: scope.sessionId } })).toBe(before);
  });
});
