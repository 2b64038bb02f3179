// Speech to text with Fish Audio (`POST /v1/asr`, multipart: `audio` file, `language`,
// `ignore_timestamps`; bearer key). Answers `{text, duration (seconds), segments: [{text,
// start, end}]}`. Priced per started minute of audio.
// Not exercised against the vendor here: built from its published API.
import { z } from 'zod';
import { FormData } from 'undici';
import { defineCapability } from './define.js';
import { loadMedia, mediaInput } from './media.js';
import { vendorJson } from './vendors.js';

export const fishAudioTranscribe = defineCapability({
  id: 'fish-audio.transcribe',
  vendor: 'fish-audio',
  description: 'Transcribe speech in an audio file to text (Fish Audio), with timed segments.',
  args: z.strictObject({
    audio: mediaInput,
    language: z.string().min(2).max(8).optional().describe('e.g. en, zh; omitted: detected'),
    timestamps: z.boolean().default(true),
  }),
  async run(a, ctx) {
    const audio = await loadMedia(a.audio, ctx);
    const form = new FormData();
    form.append('audio', new Blob([new Uint8Array(audio.data)], { type: audio.mimeType }), audio.filename);
    if (a.language) form.append('language', a.language);
    form.append('ignore_timestamps', String(!a.timestamps));
    const body = await vendorJson<{ text?: string; duration?: number; segments?: { text?: string; start?: number; end?: number }[] }>(
      'Fish Audio',
      ctx.access,
      `${ctx.access.baseUrl}/v1/asr`,
      {
        method: 'POST',
        body: form,
        signal: ctx.signal,
        timeoutMs: 300_000,
        headers: { authorization: `Bearer ${ctx.access.key}` },
      },
    );
    const seconds = typeof body.duration === 'number' ? body.duration : 0;
    return {
      result: {
        text: body.text ?? '',
        duration_seconds: seconds,
        ...(a.timestamps ? { segments: (body.segments ?? []).map((s) => ({ text: s.text ?? '', start: s.start ?? null, end: s.end ?? null })) } : {}),
      },
      units: { audio_minute: Math.max(1, Math.ceil(seconds / 60)) },
    };
  },
});
