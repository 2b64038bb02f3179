// The one reasoning-effort table (src/catalog/reasoning-effort.ts) through the functions that
// read it: every value of our scale onto each target (the OpenAI families are checked in
// test/gateway/gateway.test.ts, opencode, pi and Claude Code in their engine tests).
import { describe, expect, it } from 'vitest';
import { effortFor } from '../../src/catalog/reasoning-effort.js';
import { codexReasoningEffort } from '../../src/engines/cli/codex/adapter.js';
import { claudeEffort } from '../../src/engines/cli/claude-code/adapter.js';

const SCALE = ['none', 'off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max', 'ultra'];

describe('reasoning-effort table', () => {
  it('codex: minimal … high', () => {
    expect(SCALE.map(codexReasoningEffort)).toEqual(['minimal', 'minimal', 'minimal', 'low', 'medium', 'high', 'high', 'high', 'high']);
    expect([codexReasoningEffort(null), codexReasoningEffort('huge')]).toEqual([null, null]);
  });

  it('claude_code: thinking off for none/off, low … max', () => {
    expect(SCALE.map((e) => claudeEffort(e).effort)).toEqual([null, null, 'low', 'low', 'medium', 'high', 'xhigh', 'max', 'max']);
    expect(SCALE.map((e) => claudeEffort(e).thinkingOff)).toEqual([true, true, false, false, false, false, false, false, false]);
    expect(claudeEffort('huge')).toEqual({ effort: null, thinkingOff: false });
  });

  it('an unknown or missing effort is left out everywhere', () => {
    for (const target of ['openai_gpt5', 'openai_gpt5x', 'openai_o', 'codex', 'claude_code', 'opencode_claude', 'xhigh_scale'] as const) {
      expect([effortFor(target, null), effortFor(target, undefined), effortFor(target, 'toString')]).toEqual([null, null, null]);
    }
  });
});
