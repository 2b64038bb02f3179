// Image-to-video with MiniMax (Hailuo): `POST /video_generation` with `{model, prompt,
// first_frame_image (URL or data URL), duration, resolution}` answers `{task_id, base_resp}`;
// `GET /query/video_generation?task_id=` until `status` is Success (then `file_id`) or Fail;
// `GET /files/retrieve?file_id=` gives `file.download_url`. Bearer key.
// Not exercised against the vendor here: built from its published API.
import { settings } from '../../config.js';
import { z } from 'zod';
import { defineCapability, pollUntil } from './define.js';
import { mediaAsUrl, mediaInput } from './media.js';
import { vendorDownload, vendorJson, VendorError } from './vendors.js';

interface BaseResp {
  base_resp?: { status_code?: number; status_msg?: string };
}
const checked = <T extends BaseResp>(body: T): T => {
  if (body.base_resp && body.base_resp.status_code !== 0)
    throw new VendorError(`MiniMax refused the request: ${body.base_resp.status_msg ?? `code ${body.base_resp.status_code}`}`);
  return body;
};

export const minimaxImageToVideo = defineCapability({
  id: 'mm.i2v',
  vendor: 'minimax',
  description: 'Animate an image into a short video (MiniMax Hailuo image-to-video). The video is stored as a file of this session.',
  args: z.strictObject({
    image: mediaInput.describe('the first frame'),
    prompt: z.string().max(2000).default('').describe('how the scene should move'),
    duration_seconds: z.union([z.literal(6), z.literal(10)]).default(6),
    resolution: z.enum(['768P', '1080P']).default('768P'),
  }),
  async run(a, ctx) {
    if (a.resolution === '1080P' && a.duration_seconds === 10) throw new VendorError('1080P videos last 6 seconds');
    const auth = { authorization: `Bearer ${ctx.access.key}`, 'content-type': 'application/json' };
    const created = checked(
      await vendorJson<BaseResp & { task_id?: string }>('MiniMax', ctx.access, `${ctx.access.baseUrl}/video_generation`, {
        method: 'POST',
        headers: auth,
        signal: ctx.signal,
        timeoutMs: 60_000,
        body: JSON.stringify({
          model: settings.minimaxVideoModel(),
          prompt: a.prompt,
          first_frame_image: await mediaAsUrl(a.image, ctx),
          duration: a.duration_seconds,
          resolution: a.resolution,
        }),
      }),
    );
    if (!created.task_id) throw new VendorError('MiniMax answered no task id');
    const done = await pollUntil(
      async () => {
        const t = checked(
          await vendorJson<BaseResp & { status?: string; file_id?: string | number; video_width?: number; video_height?: number }>(
            'MiniMax',
            ctx.access,
            `${ctx.access.baseUrl}/query/video_generation?task_id=${encodeURIComponent(created.task_id!)}`,
            { headers: auth, signal: ctx.signal, timeoutMs: 30_000 },
          ),
        );
        if (t.status === 'Fail') throw new VendorError('MiniMax could not generate the video');
        return t.status === 'Success' && t.file_id ? t : null;
      },
      ctx.signal,
      'the MiniMax task',
    );
    const file = checked(
      await vendorJson<BaseResp & { file?: { download_url?: string } }>(
        'MiniMax',
        ctx.access,
        `${ctx.access.baseUrl}/files/retrieve?file_id=${encodeURIComponent(String(done.file_id))}`,
        { headers: auth, signal: ctx.signal, timeoutMs: 30_000 },
      ),
    );
    if (!file.file?.download_url) throw new VendorError('MiniMax answered no download URL');
    const video = await vendorDownload('MiniMax', file.file.download_url, { signal: ctx.signal, timeoutMs: 300_000 });
    return {
      result: { task_id: created.task_id, resolution: a.resolution, duration_seconds: a.duration_seconds },
      files: [
        {
          data: video.data,
          mimeType: video.mimeType.startsWith('video/') ? video.mimeType : 'video/mp4',
          filename: `minimax-${created.task_id}.mp4`,
          width: done.video_width ?? null,
          height: done.video_height ?? null,
          durationMs: a.duration_seconds * 1000,
          alt: a.prompt.slice(0, 200) || null,
        },
      ],
      units: { [`video_${a.resolution.toLowerCase()}_${a.duration_seconds}s`]: 1 },
    };
  },
});
