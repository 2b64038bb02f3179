// A small server-sent-events parser for provider streams: bytes in (split anywhere), complete
// `{event, data}` records out.
export interface SseRecord {
  event: string | null;
  data: string;
}

export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseRecord> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event: string | null = null;
  let data: string[] = [];
  const flushLine = function* (line: string): Generator<SseRecord> {
    if (line === '') {
      if (data.length) yield { event, data: data.join('\n') };
      event = null;
      data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffer.search(/\r\n|\n|\r/)) !== -1) {
      const line = buffer.slice(0, nl);
      const sepLength = buffer[nl] === '\r' && buffer[nl + 1] === '\n' ? 2 : 1;
      // A lone \r at the very end may be the first half of \r\n: wait for more.
      if (buffer[nl] === '\r' && nl + 1 === buffer.length) break;
      buffer = buffer.slice(nl + sepLength);
      yield* flushLine(line);
    }
  }
  buffer += decoder.decode();
  if (buffer) yield* flushLine(buffer);
  yield* flushLine('');
}
