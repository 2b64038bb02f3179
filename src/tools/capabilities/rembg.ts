// Background removal with a rembg server (`rembg s`: `POST /api/remove`, multipart field `file`,
// answers the PNG cut-out). REMBG_BASE_URL is the server's address (no public default);
// REMBG_API_KEY, when set, is sent as a bearer token for servers behind an authenticating proxy.
// Not exercised against the vendor here: built from its published API.
import { settings } from '../../config.js';
import { z } from 'zod';
import { FormData } from 'undici';
import { defineCapability } from './define.js';
import { loadMedia, mediaInput } from './media.js';
import { vendorBytes } from './vendors.js';

export const rembgRemoveBackground = defineCapability({
  id: 'rembg.remove-background',
  vendor: 'rembg',
  description: 'Remove the background of an image; the cut-out (PNG with transparency) is stored as a file of this session.',
  args: z.strictObject({ image: mediaInput }),
  async run(a, ctx) {
    const image = await loadMedia(a.image, ctx);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(image.data)], { type: image.mimeType }), image.filename);
    const key = settings.rembgApiKey();
    const out = await vendorBytes('rembg', ctx.access, `${ctx.access.baseUrl}/api/remove`, {
      method: 'POST',
      body: form,
      signal: ctx.signal,
      timeoutMs: 120_000,
      headers: key ? { authorization: `Bearer ${key}` } : {},
    });
    const base = image.filename.replace(/\.[^.]+$/, '') || 'image';
    return {
      result: { source: image.filename },
      files: [
        {
          data: out.data,
          mimeType: out.mimeType.startsWith('image/') ? out.mimeType : 'image/png',
          filename: `${base}-cutout.png`,
          alt: `${base} without its background`,
        },
      ],
      units: { image: 1 },
    };
  },
});
