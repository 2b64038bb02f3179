// Image generation with OpenAI's Images API (`POST /images/generations`, model gpt-image-1 by
// default, GPTIMAGE_MODEL to change it). gpt-image models answer base64 images; each becomes a
// session file. Priced per image by quality and size.
import { settings } from '../../config.js';
import { z } from 'zod';
import { defineCapability } from './define.js';
import { vendorJson } from './vendors.js';
import type { ProducedFile } from '../result-files.js';

const SIZES = ['1024x1024', '1024x1536', '1536x1024'] as const;

interface ImagesAnswer {
  created?: number;
  data?: { b64_json?: string; revised_prompt?: string }[];
  size?: string;
  quality?: string;
  output_format?: string;
}

export const gptImageGenerate = defineCapability({
  id: 'gptimage.generate',
  vendor: 'openai',
  description: 'Generate images from a text prompt (OpenAI gpt-image). The images are stored as files of this session; the result lists their file ids.',
  args: z.strictObject({
    prompt: z.string().min(1).max(32_000),
    n: z.number().int().min(1).max(4).default(1),
    size: z.enum(SIZES).default('1024x1024'),
    quality: z.enum(['low', 'medium', 'high']).default('medium'),
    background: z.enum(['auto', 'transparent', 'opaque']).optional(),
    output_format: z.enum(['png', 'jpeg', 'webp']).default('png'),
  }),
  async run(a, ctx) {
    const answer = await vendorJson<ImagesAnswer>('OpenAI images', ctx.access, `${ctx.access.baseUrl}/images/generations`, {
      method: 'POST',
      signal: ctx.signal,
      timeoutMs: 300_000,
      maxBytes: 128 * 1024 * 1024,
      headers: { authorization: `Bearer ${ctx.access.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: settings.gptImageModel(),
        prompt: a.prompt,
        n: a.n,
        size: a.size,
        quality: a.quality,
        output_format: a.output_format,
        ...(a.background ? { background: a.background } : {}),
      }),
    });
    const format = answer.output_format ?? a.output_format;
    const mimeType = `image/${format === 'jpg' ? 'jpeg' : format}`;
    const size = SIZES.includes(answer.size as (typeof SIZES)[number]) ? answer.size! : a.size;
    const [width, height] = size.split('x').map(Number);
    const quality = ['low', 'medium', 'high'].includes(answer.quality ?? '') ? answer.quality! : a.quality;
    const files: ProducedFile[] = (answer.data ?? [])
      .filter((d) => d.b64_json)
      .map((d, i) => ({
        data: Buffer.from(d.b64_json!, 'base64'),
        mimeType,
        filename: `image-${answer.created ?? Date.now()}-${i + 1}.${format === 'jpeg' ? 'jpg' : format}`,
        width,
        height,
        alt: a.prompt.slice(0, 200),
      }));
    if (!files.length) throw new Error('OpenAI images answered no image');
    const revised = (answer.data ?? []).map((d) => d.revised_prompt).filter(Boolean);
    return {
      result: { size, quality, ...(revised.length ? { revised_prompts: revised } : {}) },
      files,
      units: { [`image_${quality}_${size}`]: files.length },
    };
  },
});
