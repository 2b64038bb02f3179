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

/**
 * The answer's records, one batch per network chunk: one await per chunk, not per record, and no
 * generator between the socket and the provider's own loop (issue #29: under many concurrent
 * turns, each async layer per record was a visible share of a turn's promises and CPU).
 */
export async function* sseBatches(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseRecord[]> {
  const readable = isNodeReadable(body) ? body : null;
  const decoder = new SseDecoder();
  try {
    for await (const chunk of readable ? readable.iterator({ destroyOnReturn: false }) : body) {
      const batch = decoder.push(chunk);
      if (batch.length) yield batch;
    }
    const tail = decoder.end();
    if (tail.length) yield tail;
  } finally {
    if (readable) drainRest(readable);
  }
}

/** The answer's records one by one (sseBatches, flattened): for tests and readers that want no batches; the providers use sseBatches. */
export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseRecord> {
  for await (const batch of sseBatches(body)) yield* batch;
}

/** Bytes in (split anywhere), complete records out; synchronous. */
export class SseDecoder {
  private readonly decoder = new TextDecoder(); // strips a leading BOM, as the SSE spec asks
  private buffer = '';
  private event: string | null = null;
  private data: string[] = [];

  /** The records this chunk completes. */
  push(chunk: Uint8Array): SseRecord[] {
    const out: SseRecord[] = [];
    const buffer = this.buffer + this.decoder.decode(chunk, { stream: true });
    // Walk the buffer with an index and cut it once per chunk (not once per line).
    let start = 0;
    for (let i = 0; i < buffer.length; i++) {
      const c = buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      // A \r at the very end may be the first half of \r\n: wait for the next chunk.
      if (c === 13 && i + 1 === buffer.length) break;
      const rec = this.line(buffer.slice(start, i));
      if (c === 13 && buffer.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
      if (rec) out.push(rec);
    }
    this.buffer = buffer.slice(start);
    return out;
  }

  /** The end of the stream, lenient: an unterminated last line and a missing final blank line still count. */
  end(): SseRecord[] {
    const out: SseRecord[] = [];
    const buffer = this.buffer + this.decoder.decode();
    this.buffer = '';
    if (buffer) {
      const rec = this.line(buffer.endsWith('\r') ? buffer.slice(0, -1) : buffer);
      if (rec) out.push(rec);
    }
    const last = this.line('');
    if (last) out.push(last);
    return out;
  }

  // One line of the stream; a blank line dispatches the record gathered so far.
  private line(text: string): SseRecord | null {
    if (text === '') {
      const rec = this.data.length ? { event: this.event, data: this.data.join('\n') } : null;
      this.event = null;
      this.data = [];
      return rec;
    }
    if (text.startsWith(':')) return null; // comment / keep-alive
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    return null; // `id:` and `retry:` do not matter for one-shot provider streams
  }
}
