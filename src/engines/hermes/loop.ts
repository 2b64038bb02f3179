// hermes: the service's own agent loop. Streams the model through the gateway, turns deltas
// into agent.message / agent.reasoning events (coalesced), runs tool calls (sandbox tools,
// remote MCP tools, platform capabilities: the session's Toolbox), and repeats until the model
// ends its turn, a call waits for a person's confirmation, the turn is interrupted, or it
// fails for good.
import type { ChatMessage, ModelEvent, ModelRequest, ToolSpec } from '../../gateway/types.js';
import { ProviderError } from '../../gateway/types.js';
import type { Toolbox } from '../../tools/types.js';
import { emitOutcome, toolCallPart, type EmitEvent } from '../../tools/tool-events.js';
import { newId } from '../../ids.js';
import { StreamCoalescer } from './coalescer.js';

export type { StopReason } from '../../events/types.js';
import type { StopReason } from '../../events/types.js';

import { BUDGET_STOP, stoppedForBudget } from '../../gateway/budget-stop.js';

export interface HermesTurn {
  request: Omit<ModelRequest, 'messages' | 'tools'>;
  messages: ChatMessage[];
  tools: Toolbox;
  signal: AbortSignal;
  emit: EmitEvent;
  callModel(req: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
  maxAttempts: number;
  retryDelayMs(attempt: number): number;
  maxSteps?: number;
  /**
   * Compaction (compaction.ts): the messages the next call sends, the conversation summarised
   * when it would not fit (`refused`: the provider refused the last prompt as too long).
   */
  fitContext?(messages: ChatMessage[], tools: ToolSpec[], trigger: 'auto' | 'refused'): Promise<ChatMessage[]>;
  /** Whether an error is the provider refusing a prompt as too long for the model. */
  isContextRefusal?(err: unknown): boolean;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

interface StepResult {
  text: string;
  reasoning: { text: string; signature: string | null; redacted: boolean }[];
  toolCalls: { id: string; name: string; input: Record<string, unknown> }[];
}

const noop = () => undefined;

/** One model call, streaming its output as events. Throws ProviderError / BudgetReachedError. */
async function modelStep(t: HermesTurn, messages: ChatMessage[], tools: ToolSpec[]): Promise<StepResult> {
  const messageId = newId('msg');
  // The sinks hand back the commit's promise as it is (no async frame per streamed chunk).
  const text = new StreamCoalescer((chunk, index) =>
    t
      .emit({
        type: 'agent.message',
        fields: { messageId, final: false, parts: [{ type: 'text', index: 0, text: chunk, stream_id: messageId, stream_index: index }], text: chunk },
      })
      .then(noop),
  );
  const reasoningId = newId('msg');
  const reasoningStream = new StreamCoalescer((chunk, index) =>
    t
      .emit({
        type: 'agent.reasoning',
        fields: { final: false, part: { type: 'reasoning', index: 0, text: chunk, redacted: false, stream_id: reasoningId, stream_index: index } },
      })
      .then(noop),
  );
  const result: StepResult = { text: '', reasoning: [], toolCalls: [] };
  let reasoningText = '';
  for await (const ev of t.callModel({ ...t.request, messages, tools }, t.signal)) {
    if (t.signal.aborted) break;
    switch (ev.type) {
      case 'text_delta':
        result.text += ev.text;
        text.push(ev.text);
        break;
      case 'reasoning_delta':
        reasoningText += ev.text;
        reasoningStream.push(ev.text);
        break;
      case 'reasoning_done':
        await reasoningStream.flush();
        result.reasoning.push({ text: reasoningText, signature: ev.signature ?? null, redacted: !!ev.redacted });
        await t.emit({
          type: 'agent.reasoning',
          fields: {
            final: true,
            signature: ev.signature ?? null,
            part: { type: 'reasoning', index: 0, text: reasoningText, redacted: !!ev.redacted, stream_id: reasoningId, stream_index: null },
          },
        });
        reasoningText = '';
        break;
      case 'tool_call':
        result.toolCalls.push({ id: ev.id, name: ev.name, input: ev.input });
        break;
      default:
        break;
    }
  }
  await text.flush();
  await reasoningStream.flush();
  if (result.text) {
    await t.emit({
      type: 'agent.message',
      fields: { messageId, final: true, parts: [{ type: 'text', index: 0, text: result.text, stream_id: messageId, stream_index: null }], text: result.text },
    });
  }
  return result;
}

export async function runHermesTurn(t: HermesTurn): Promise<StopReason> {
  const messages = t.messages;
  const maxSteps = t.maxSteps ?? 50;
  for (let step = 0; step < maxSteps; step++) {
    let result: StepResult | null = null;
    let refused = false;
    for (let attempt = 1; ; attempt++) {
      if (t.signal.aborted) return { type: 'end_turn' };
      try {
        // One look at the tools per call: the fitting and the call see the same list (a step after
        // tool calls looks again, so a capability granted meanwhile is offered).
        const tools = await t.tools.specs();
        if (t.fitContext) {
          const fitted = await t.fitContext(messages, tools, refused ? 'refused' : 'auto');
          if (fitted !== messages) messages.splice(0, messages.length, ...fitted);
        }
        result = await modelStep(t, messages, tools);
        break;
      } catch (err) {
        if (t.signal.aborted) return { type: 'end_turn' };
        if (stoppedForBudget(err)) return BUDGET_STOP;
        if (!refused && t.isContextRefusal?.(err)) {
          // The estimate fell short: compact now and call again (once), never pass the 400 on.
          refused = true;
          attempt--;
          continue;
        }
        const pe = err instanceof ProviderError ? err : null;
        const retry = !!pe?.retryable && attempt < t.maxAttempts;
        await t.emit({
          type: 'session.error',
          fields: {
            error: {
              type: pe?.code ?? 'engine_error',
              message: pe ? pe.message : `model call failed: ${(err as Error).message}`,
              retry_status: retry ? 'retrying' : 'exhausted',
              attempt,
            },
          },
        });
        if (!retry) return { type: 'retries_exhausted' };
        // Progress while nothing else happens: the turn waits, then calls the model again.
        const delayMs = t.retryDelayMs(attempt);
        await t.emit({
          type: 'agent.status',
          fields: {
            part: {
              type: 'status',
              index: 0,
              level: 'waiting',
              text: `retrying the model call in ${Math.max(1, Math.round(delayMs / 1000))} s (attempt ${attempt + 1} of ${t.maxAttempts})`,
            },
          },
        });
        await sleep(delayMs, t.signal);
      }
    }
    if (t.signal.aborted) return { type: 'end_turn' };
    const assistant: ChatMessage = { role: 'assistant', content: [] };
    for (const r of result!.reasoning) assistant.content.push({ type: 'reasoning', text: r.text, signature: r.signature, redacted: r.redacted });
    if (result!.text) assistant.content.push({ type: 'text', text: result!.text });
    for (const c of result!.toolCalls) assistant.content.push({ type: 'tool_use', id: c.id, name: c.name, input: c.input });
    if (assistant.content.length) messages.push(assistant);
    if (!result!.toolCalls.length) return { type: 'end_turn' };

    const results: ChatMessage = { role: 'user', content: [] };
    const calls = result!.toolCalls;
    // A call that needs a confirmation pauses the turn there: it and the calls after it are
    // announced, the ones needing one marked, and run when the turn resumes (tools/confirmations).
    const decisions = await Promise.all(calls.map((c) => t.tools.decide(c.name)));
    const firstAsk = decisions.indexOf('ask');
    for (const [index, call] of calls.entries()) {
      if (firstAsk !== -1 && index >= firstAsk) break;
      // The call starts while its agent.tool_use is stored (the result is stored after both):
      // a remote call does not wait for the database, nor the database for it.
      const running = t.tools.run(call, t.signal);
      running.catch(() => undefined); // awaited below; a failed emit must not leave it unobserved
      await t.emit({ type: 'agent.tool_use', fields: { part: toolCallPart(index, call) } });
      const outcome = await running;
      if (t.signal.aborted) return { type: 'end_turn' };
      await emitOutcome(t.emit, index, call, outcome);
      results.content.push({ type: 'tool_result', toolUseId: call.id, content: JSON.stringify(outcome.result), isError: outcome.status === 'error' });
    }
    if (firstAsk !== -1) {
      const waiting: string[] = [];
      for (let index = firstAsk; index < calls.length; index++) {
        const ask = decisions[index] === 'ask';
        const ev = await t.emit({
          type: 'agent.tool_use',
          fields: { part: toolCallPart(index, calls[index]!), ...(ask ? { awaiting_confirmation: true } : {}) },
        });
        if (ask) waiting.push(ev.id);
      }
      return { type: 'requires_action', event_ids: waiting };
    }
    messages.push(results);
  }
  await t.emit({
    type: 'session.error',
    fields: { error: { type: 'max_steps', message: `the turn used its ${maxSteps} model steps`, retry_status: 'exhausted' } },
  });
  return { type: 'end_turn' };
}
