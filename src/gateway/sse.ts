// A small server-sent-events parser for provider streams: bytes in (split anywhere, even inside
// a UTF-8 character or a \r\n pair), complete `{event, data}` records out.
export interface SseRecord {
  event: string | null;
  data: string;
}

/** A Node stream's async iterator that does not destroy it when the reader stops early. */
interface NodeReadable extends AsyncIterable<Uint8Array> {
  iterator(options: { destroyOnReturn: boolean }): AsyncIterable<Uint8Array>;
  readableEnded: boolean;
  destroyed: boolean;
  resume(): unknown;
  destroy(): unknown;
  on(event: 'error' | 'end', listener: () => void): unknown;
}

function isNodeReadable(body: AsyncIterable<Uint8Array>): body is NodeReadable {
  return typeof (body as Partial<NodeReadable>).iterator === 'function' && typeof (body as Partial<NodeReadable>).resume === 'function';
}

// How long the rest of an answer read past its last record may take to end before the connection
// is dropped rather than kept for the next call.
const DRAIN_MS = 5_000;

/**
 * When the reader stops at the provider's last record (`message_stop`, `[DONE]`), the few bytes
 * left are read and dropped, so the keep-alive connection goes back to the pool: breaking out of
 * the stream's own iterator would destroy it (a new TCP connection per model call, and an
 * AbortError whose stack is built; issue #29). A body that does not end soon is dropped.
 */
function drainRest(body: NodeReadable): void {
  if (body.readableEnded || body.destroyed) return;
  body.on('error', () => undefined); // the call's answer is complete: a late socket error is moot
  const timer = setTimeout(() => body.destroy(), DRAIN_MS);
  timer.unref();
  body.on('end', () => clearTimeout(timer));
  body.resume();
}

export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseRecord> {
  const readable = isNodeReadable(body) ? body : null;
  try {
    yield* records(readable ? readable.iterator({ destroyOnReturn: false }) : body);
  } finally {
    if (readable) drainRest(readable);
  }
}

async function* records(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseRecord> {
  const decoder = new TextDecoder(); // strips a leading BOM, as the SSE spec asks
  let buffer = '';
  let event: string | null = null;
  let data: string[] = [];

  // One line of the stream; a blank line dispatches the record gathered so far.
  const line = (text: string): SseRecord | null => {
    if (text === '') {
      const rec = data.length ? { event, data: data.join('\n') } : null;
      event = null;
      data = [];
      return rec;
    }
    if (text.startsWith(':')) return null; // comment / keep-alive
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    return null; // `id:` and `retry:` do not matter for one-shot provider streams
  };

  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    // Walk the buffer with an index and cut it once per chunk (not once per line).
    let start = 0;
    for (let i = 0; i < buffer.length; i++) {
      const c = buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      // A \r at the very end may be the first half of \r\n: wait for the next chunk.
      if (c === 13 && i + 1 === buffer.length) break;
      const rec = line(buffer.slice(start, i));
      if (c === 13 && buffer.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
      if (rec) yield rec;
    }
    buffer = buffer.slice(start);
  }
  buffer += decoder.decode();
  // Lenient at the end: an unterminated last line and a missing final blank line still count.
  if (buffer) {
    const rec = line(buffer.endsWith('\r') ? buffer.slice(0, -1) : buffer);
    if (rec) yield rec;
  }
  const last = line('');
  if (last) yield last;
}
