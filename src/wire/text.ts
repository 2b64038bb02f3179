// Which strings cannot be stored as text (a NUL, an unpaired UTF-16 surrogate): refused by the
// edge's input hygiene (src/http/input-hygiene.ts) and by the multipart upload handlers, which
// read their fields themselves; replaced in events, whose text also comes from commands, models
// and tools (storableJson, used by src/events/store.ts).

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (without
 * the `u` flag a regex sees UTF-16 code units, which is what a lone surrogate is). */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be stored as text (a NUL, an unpaired surrogate), or null. */
export function textProblem(s: string): string | null {
  if (s.includes('\u0000')) return 'contains a NUL character';
  if (LONE_SURROGATE.test(s)) return 'contains an unpaired UTF-16 surrogate';
  return null;
}

// JSON.stringify writes a NUL as `\u0000` and an unpaired surrogate as `\udXXX` (lowercase);
// PostgreSQL's jsonb refuses both. A match may also be text that only looks like one (`\\u0000`):
// the slow path below then changes nothing.
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/;

const UNSTORABLE_CHARS = new RegExp(`\\u0000|${LONE_SURROGATE.source}`, 'g');

/** A string a database stores as text: each NUL and unpaired surrogate replaced by U+FFFD. */
function storableText(s: string): string {
  return s.replace(UNSTORABLE_CHARS, '\uFFFD');
}

function storableValue(v: unknown): unknown {
  if (typeof v === 'string') return storableText(v);
  if (Array.isArray(v)) return v.map(storableValue);
  if (v && typeof v === 'object') {
    const json = (v as { toJSON?: () => unknown }).toJSON;
    if (typeof json === 'function') return storableValue(json.call(v));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [storableText(k), storableValue(x)]));
  }
  return v;
}

/**
 * `JSON.stringify(value)` that a `jsonb` column accepts: text from outside the API's input
 * hygiene (a command's output, a model's stream, a tool's result) may hold a NUL or half of a
 * surrogate pair, and one such character would fail the whole insert (the event lost to a turn
 * error). Each is replaced by U+FFFD, as a decoder does with bytes it cannot read. The common
 * case costs one scan of the JSON text.
 */
export function storableJson(value: unknown): string {
  const json = JSON.stringify(value);
  return UNSTORABLE_ESCAPE.test(json) ? JSON.stringify(storableValue(value)) : json;
}
