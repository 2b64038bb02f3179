// Which strings cannot be stored as text (a NUL, an unpaired UTF-16 surrogate): checked by the
// edge's input hygiene (src/http/input-hygiene.ts) and by the multipart upload handlers, which
// read their fields themselves.

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (without
 * the `u` flag a regex sees UTF-16 code units, which is what a lone surrogate is). */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be stored as text (a NUL, an unpaired surrogate), or null. */
export function textProblem(s: string): string | null {
  if (s.includes('\u0000')) return 'contains a NUL character';
  if (LONE_SURROGATE.test(s)) return 'contains an unpaired UTF-16 surrogate';
  return null;
}
