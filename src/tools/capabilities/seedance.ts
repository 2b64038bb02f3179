// Video generation with Seedance on BytePlus ModelArk: `POST /contents/generations/tasks` with
// `{model, content: [{type: text, text: "<prompt> --resolution 720p --duration 5 --ratio 16:9"},
// {type: image_url, image_url: {url}}?]}` answers `{id}`; `GET /contents/generations/tasks/{id}`
// until `status` is succeeded (then `content.video_url`) or failed. Bearer key.
// Not exercised against the vendor here: built from its published API.
import { settings } from '../../config.js';
import { z } from 'zod';
import { defineCapability, pollUntil } from './define.js';
import { mediaAsUrl, mediaInput } from './media.js';
import { vendorDownload, vendorJson, VendorError } from './vendors.js';

interface Task {
  id?: string;
  status?: string;
  content?: { video_url?: string };
  error?: { code?: string; message?: string } | null;
}

export const seedanceGenerate = defineCapability({
  id: 'seedance.generate',
  vendor: 'seedance',
  description: 'Generate a short video from a text prompt, optionally starting from an image (Seedance). The video is stored as a file of this session.',
  args: z.strictObject({
    prompt: z.string().min(1).max(2000),
    first_frame: mediaInput.optional().describe('an image the video starts from'),
    resolution: z.enum(['480p', '720p', '1080p']).default('720p'),
    duration_seconds: z.number().int().min(3).max(12).default(5),
    ratio: z.enum(['16:9', '9:16', '1:1', '4:3', '3:4', '21:9', 'adaptive']).default('16:9'),
  }),
  async run(a, ctx) {
    const auth = { authorization: `Bearer ${ctx.access.key}`, 'content-type': 'application/json' };
    const content: Record<string, unknown>[] = [
      { type: 'text', text: `${a.prompt} --resolution ${a.resolution} --duration ${a.duration_seconds} --ratio ${a.ratio}` },
    ];
    if (a.first_frame) content.push({ type: 'image_url', image_url: { url: await mediaAsUrl(a.first_frame, ctx) } });
    const created = await vendorJson<Task>('Seedance', ctx.access, `${ctx.access.baseUrl}/contents/generations/tasks`, {
      method: 'POST',
      headers: auth,
      signal: ctx.signal,
      timeoutMs: 60_000,
      body: JSON.stringify({ model: settings.seedanceModel(), content }),
    });
    if (!created.id) throw new VendorError('Seedance answered no task id');
    const done = await pollUntil(
      async () => {
        const t = await vendorJson<Task>('Seedance', ctx.access, `${ctx.access.baseUrl}/contents/generations/tasks/${encodeURIComponent(created.id!)}`, {
          headers: auth,
          signal: ctx.signal,
          timeoutMs: 30_000,
        });
        if (t.status === 'failed' || t.status === 'cancelled')
          throw new VendorError(`Seedance task ${t.status}${t.error?.message ? `: ${t.error.message}` : ''}`);
        return t.status === 'succeeded' ? t : null;
      },
      ctx.signal,
      'the Seedance task',
    );
    if (!done.content?.video_url) throw new VendorError('Seedance answered no video URL');
    const video = await vendorDownload('Seedance', done.content.video_url, { signal: ctx.signal, timeoutMs: 300_000 });
    return {
      result: { task_id: created.id, resolution: a.resolution, duration_seconds: a.duration_seconds },
      files: [
        {
          data: video.data,
          mimeType: video.mimeType.startsWith('video/') ? video.mimeType : 'video/mp4',
          filename: `seedance-${created.id}.mp4`,
          durationMs: a.duration_seconds * 1000,
          alt: a.prompt.slice(0, 200),
        },
      ],
      units: { [`second_${a.resolution}`]: a.duration_seconds },
    };
  },
});
