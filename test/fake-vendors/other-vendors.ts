// Fakes for the capabilities whose vendors could not be reached here, built from their
// published API descriptions (not from recorded traffic): TinyFish Fetch and Agent, DataForSEO
// SERP, a rembg server, Seedance on BytePlus ModelArk (task + polling), MiniMax video (task,
// polling, file retrieval) and Fish Audio speech to text. They check the credential and the
// request shape the adapters send, so the adapters' code paths run end to end.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TINY_PNG } from './mcp-server.js';

export const FAKE_MP4 = Buffer.from('00000018667479706d703432000000006d703432', 'hex');

export interface OtherVendors {
  base: string;
  requests: { method: string; path: string; headers: http.IncomingHttpHeaders; body: Buffer }[];
  close(): Promise<void>;
}

export async function startOtherVendors(keys: Record<string, string>): Promise<OtherVendors> {
  const requests: OtherVendors['requests'] = [];
  const polls = new Map<string, number>();
  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  let base = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', 'http://x');
      const path = url.pathname;
      requests.push({ method: req.method ?? '', path, headers: req.headers, body });
      const parsed = () => JSON.parse(body.toString('utf8') || 'null');
      const bearer = (key: string) => req.headers.authorization === `Bearer ${key}`;
      const multipartHas = (field: string) => String(req.headers['content-type']).startsWith('multipart/form-data') && body.includes(`name="${field}"`);

      if (path === '/tinyfish-fetch') {
        if (req.headers['x-api-key'] !== keys.tinyfish) return json(res, 401, { error: 'invalid key' });
        const { urls } = parsed();
        return json(res, 200, {
          results: urls.filter((u: string) => !u.includes('bad')).map((u: string) => ({ url: u, title: 'T', description: 'D', text: `# page ${u}` })),
          errors: urls.filter((u: string) => u.includes('bad')).map((u: string) => ({ url: u, error: 'target_http_error', status: 500 })),
        });
      }
      if (path === '/tinyfish-agent/v1/automation/run') {
        if (req.headers['x-api-key'] !== keys.tinyfish) return json(res, 401, { error: { code: 'UNAUTHORIZED', message: 'bad key' } });
        const b = parsed();
        if (!b.url || !b.goal) return json(res, 400, { error: { code: 'INVALID_INPUT', message: 'url and goal are required' } });
        return json(res, 200, {
          run_id: 'run_1',
          status: b.goal.includes('impossible') ? 'FAILED' : 'COMPLETED',
          num_of_steps: 3,
          result: { price: '$12' },
          error: b.goal.includes('impossible') ? { code: 'TASK_FAILED', message: 'could not reach the goal' } : null,
        });
      }
      if (path === '/dataforseo/v3/serp/google/organic/live/advanced') {
        if (req.headers.authorization !== `Basic ${Buffer.from(keys.dataforseo!).toString('base64')}`)
          return json(res, 401, { status_code: 40100, status_message: 'You are not authorized to access this resource.' });
        const [task] = parsed();
        return json(res, 200, {
          status_code: 20000,
          status_message: 'Ok.',
          cost: 0.002,
          tasks: [
            {
              status_code: 20000,
              status_message: 'Ok.',
              result: [
                {
                  keyword: task.keyword,
                  se_results_count: 1234,
                  items: [
                    { type: 'featured_snippet', rank_group: 1, rank_absolute: 1, title: 'Snippet' },
                    {
                      type: 'organic',
                      rank_group: 1,
                      rank_absolute: 2,
                      title: 'First',
                      url: 'https://first.example/',
                      description: 'the first',
                      domain: 'first.example',
                    },
                  ],
                },
              ],
            },
          ],
        });
      }
      if (path === '/rembg/api/remove') {
        if (!multipartHas('file')) return json(res, 422, { detail: 'file is required' });
        return res.writeHead(200, { 'content-type': 'image/png' }).end(TINY_PNG);
      }
      if (path === '/ark/contents/generations/tasks' && req.method === 'POST') {
        if (!bearer(keys.seedance!)) return json(res, 401, { error: { code: 'AuthenticationError', message: 'bad key' } });
        const b = parsed();
        if (!b.model || !Array.isArray(b.content) || b.content[0]?.type !== 'text')
          return json(res, 400, { error: { code: 'InvalidParameter', message: 'content' } });
        return json(res, 200, { id: 'cgt-1' });
      }
      if (path === '/ark/contents/generations/tasks/cgt-1') {
        const n = (polls.get(path) ?? 0) + 1;
        polls.set(path, n);
        return json(
          res,
          200,
          n < 2
            ? { id: 'cgt-1', status: 'running' }
            : { id: 'cgt-1', status: 'succeeded', content: { video_url: `${base}/cdn/video.mp4` }, usage: { completion_tokens: 100, total_tokens: 100 } },
        );
      }
      if (path === '/minimax/video_generation') {
        if (!bearer(keys.minimax!)) return json(res, 200, { base_resp: { status_code: 1004, status_msg: 'authorization failed' } });
        const b = parsed();
        if (!b.first_frame_image) return json(res, 200, { base_resp: { status_code: 2013, status_msg: 'invalid params, first_frame_image' } });
        return json(res, 200, { task_id: 'mm-1', base_resp: { status_code: 0, status_msg: 'success' } });
      }
      if (path === '/minimax/query/video_generation') {
        const n = (polls.get(path) ?? 0) + 1;
        polls.set(path, n);
        return json(
          res,
          200,
          n < 2
            ? { task_id: url.searchParams.get('task_id'), status: 'Processing', base_resp: { status_code: 0 } }
            : { task_id: 'mm-1', status: 'Success', file_id: 998877, video_width: 1366, video_height: 768, base_resp: { status_code: 0 } },
        );
      }
      if (path === '/minimax/files/retrieve') {
        return json(res, 200, {
          file: { file_id: Number(url.searchParams.get('file_id')), bytes: FAKE_MP4.length, filename: 'output.mp4', download_url: `${base}/cdn/video.mp4` },
          base_resp: { status_code: 0 },
        });
      }
      if (path === '/cdn/video.mp4') return res.writeHead(200, { 'content-type': 'video/mp4' }).end(FAKE_MP4);
      if (path === '/fish/v1/asr') {
        if (!bearer(keys.fish!)) return json(res, 401, { status: 401, message: 'Invalid token' });
        if (!multipartHas('audio')) return json(res, 422, [{ loc: ['body', 'audio'], msg: 'field required', type: 'missing' }]);
        return json(res, 200, {
          text: 'hello world',
          duration: 75.2,
          segments: [
            { text: 'hello', start: 0, end: 0.5 },
            { text: 'world', start: 0.5, end: 1.1 },
          ],
        });
      }
      json(res, 404, { error: `no route ${req.method} ${path}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
