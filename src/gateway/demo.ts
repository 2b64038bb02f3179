// The built-in demo model (`demo-echo` in the catalog): lets a newcomer see a turn stream without
// any provider key. It calls nothing: it answers in-process by echoing the latest user message,
// in the same normalized stream every provider adapter produces, so the hermes loop, metering,
// events and SSE run exactly as for a real model. Deterministic; zero cost (catalog prices 0).
import { emptyUsage, type ModelEvent, type ModelRequest } from './types.js';

/** The reply to `req`: fixed words around the text of the latest user message. */
export function demoReply(req: ModelRequest): string {
  const lastUser = [...req.messages].reverse().find((m) => m.role === 'user' && m.content.some((b) => b.type === 'text'));
  const said =
    lastUser?.content
      .flatMap((b) => (b.type === 'text' ? [b.text] : []))
      .join('\n')
      .trim() ?? '';
  const echo = said ? `You said: ${said}` : 'Send a text message and it is echoed back.';
  return `[demo model: no provider was called, nothing was charged] ${echo}`;
}

/** The reply in word-sized chunks, as a provider streams it, then usage and the stop. */
export async function* streamDemo(req: ModelRequest, signal?: AbortSignal): AsyncIterable<ModelEvent> {
  const reply = demoReply(req);
  for (const chunk of reply.match(/\S+\s*/g) ?? []) {
    if (signal?.aborted) return; // an aborted stream just ends, as the adapters' do
    yield { type: 'text_delta', text: chunk };
    await new Promise<void>((resolve) => setImmediate(resolve)); // chunks arrive one by one
  }
  const usage = emptyUsage();
  usage.inputTokens = Math.ceil((req.system.length + JSON.stringify(req.messages).length) / 4);
  usage.outputTokens = Math.ceil(reply.length / 4);
  yield { type: 'usage', usage };
  yield { type: 'stop', reason: 'end_turn' };
}
