// Small builders shared by the CLI engines' output mappers: the session events hermes produces
// (streamed message and reasoning chunks followed by the complete text, tool calls and their
// results under one index), the gateway's base URLs for each provider API.
import { modelInfo } from '../../../catalog/catalog.js';
import { effortFor, OFF } from '../../../catalog/reasoning-effort.js';
import { newId } from '../../../ids.js';
import type { EngineEvent } from './adapter.js';

/** One text stream of the agent (a message, or a reasoning block): chunks, then the whole text. */
export class TextStream {
  readonly id = newId('msg');
  private chunks = 0;
  text = '';
  constructor(private readonly kind: 'message' | 'reasoning') {}

  chunk(text: string): EngineEvent[] {
    if (!text) return [];
    this.text += text;
    const stream_index = this.chunks++;
    return this.kind === 'message'
      ? [
          {
            type: 'agent.message',
            fields: { messageId: this.id, final: false, text, parts: [{ type: 'text', index: 0, text, stream_id: this.id, stream_index }] },
          },
        ]
      : [{ type: 'agent.reasoning', fields: { final: false, part: { type: 'reasoning', index: 0, text, redacted: false, stream_id: this.id, stream_index } } }];
  }

  /** The complete text (the CLI's own, when it says it; else what the chunks added up to). */
  final(text = this.text, opts: { signature?: string | null; redacted?: boolean } = {}): EngineEvent[] {
    if (!text && !opts.redacted) return [];
    return this.kind === 'message'
      ? [
          {
            type: 'agent.message',
            fields: { messageId: this.id, final: true, text, parts: [{ type: 'text', index: 0, text, stream_id: this.id, stream_index: null }] },
          },
        ]
      : [
          {
            type: 'agent.reasoning',
            fields: {
              final: true,
              signature: opts.signature ?? null,
              part: { type: 'reasoning', index: 0, text, redacted: opts.redacted ?? false, stream_id: this.id, stream_index: null },
            },
          },
        ];
  }
}

/** The CLI's own tool calls, numbered in the order they start; a result finds its call by id. */
export class ToolCalls {
  private next = 0;
  private readonly calls = new Map<string, { index: number; name: string }>();

  has(callId: string): boolean {
    return this.calls.has(callId);
  }

  use(callId: string, name: string, args: unknown): EngineEvent[] {
    if (this.calls.has(callId)) return [];
    const index = this.next++;
    this.calls.set(callId, { index, name });
    return [
      {
        type: 'agent.tool_use',
        fields: { part: { type: 'tool_call', index, call_id: callId, tool_name: name || 'unknown', args: asRecord(args), args_partial: null } },
      },
    ];
  }

  /** The result of a call (a call never announced is announced first, under `name`). */
  result(callId: string, status: 'ok' | 'error', result: Record<string, unknown>, name = 'unknown'): EngineEvent[] {
    const out = this.calls.has(callId) ? [] : this.use(callId, name, {});
    const call = this.calls.get(callId)!;
    out.push({
      type: 'agent.tool_result',
      fields: { part: { type: 'tool_result', index: call.index, call_id: callId, tool_name: call.name, status, result } },
    });
    return out;
  }
}

export function asRecord(v: unknown): Record<string, unknown> {
  if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  if (typeof v === 'string') {
    try {
      const parsed: unknown = JSON.parse(v);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      /* not JSON: keep it as text */
    }
    return v ? { input: v } : {};
  }
  return v === undefined || v === null ? {} : { input: v };
}

/** Text of a tool result or message content: a string, or the text blocks of a content array. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? '' : JSON.stringify(content);
  return content.map((b: any) => (typeof b === 'string' ? b : b?.type === 'text' ? String(b.text ?? '') : b?.type ? `[${b.type}]` : '')).join('');
}

/**
 * The gateway's base URL for each provider API, from the one an engine is given (the root
 * `…/gateway`, or an API's own base such as `…/gateway/anthropic` or `…/gateway/openai/v1`).
 */
export function gatewayUrls(gatewayBaseUrl: string): { root: string; anthropic: string; openai: string } {
  const root = gatewayBaseUrl.replace(/\/+$/, '').replace(/\/(anthropic|openai)(\/v1)?$/, '');
  return { root, anthropic: `${root}/anthropic`, openai: `${root}/openai/v1` };
}

/** Which provider API a model is called with (the catalog's provider; unknown names by their prefix). */
export function providerOf(model: string): 'anthropic' | 'openai' {
  const provider = modelInfo(model)?.provider; // the demo model is no CLI engine's
  return provider === 'anthropic' || provider === 'openai' ? provider : /^claude/i.test(model) ? 'anthropic' : 'openai';
}

/**
 * Our reasoningEffort scale onto a CLI whose levels run minimal … xhigh (pi's `--thinking`,
 * opencode's OpenAI variants; src/catalog/reasoning-effort.ts): none/off → the CLI's own word
 * for no reasoning, max/ultra → xhigh, null or an unknown value → null (the CLI's default).
 */
export function xhighScaleEffort(effort: string | null, offWord: string): string | null {
  const value = effortFor('xhigh_scale', effort);
  return value === OFF ? offWord : value;
}
