// A small server-sent-events parser for provider streams: bytes in (split anywhere, even inside
// a UTF-8 character or a \r\n pair), complete `{event, data}` records out.
export interface SseRecord {
  event: string | null;
  data: string;
}

export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseRecord> {
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
