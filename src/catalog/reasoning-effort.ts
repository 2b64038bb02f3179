// The one reasoning-effort table: the service's reasoningEffort scale (none/off, minimal, low,
// medium, high, xhigh, max, ultra) onto the values each place that takes one accepts: the
// OpenAI API's model families (src/gateway/openai.ts) and the CLI engines' settings
// (src/engines/cli/<engine>/adapter.ts). Below both, so the gateway never imports an engine.

/** Where an effort goes. */
export type EffortTarget =
  /** OpenAI gpt-5 (minimal … high). */
  | 'openai_gpt5'
  /** OpenAI gpt-5.1 and later (none, low … high). */
  | 'openai_gpt5x'
  /** OpenAI o-series (low … high). */
  | 'openai_o'
  /** codex's `model_reasoning_effort`. */
  | 'codex'
  /** Claude Code's `--effort` (low … max); OFF turns thinking off. */
  | 'claude_code'
  /** opencode's `--variant` of a Claude model (high, max; below high no extended thinking). */
  | 'opencode_claude'
  /** The minimal … xhigh scale of pi's `--thinking` and opencode's OpenAI variants; OFF in the CLI's word. */
  | 'xhigh_scale';

/** "Reasoning off", in the target's own word (or setting). */
export const OFF = 'off';

type Row = Readonly<Record<EffortTarget, string | null>>;

// biome-ignore format: one row per effort, one column per target, read as a table
const TABLE: Readonly<Record<string, Row>> = {
  none:    { openai_gpt5: 'minimal', openai_gpt5x: 'none',   openai_o: 'low',    codex: 'minimal', claude_code: OFF,      opencode_claude: null,   xhigh_scale: OFF },
  off:     { openai_gpt5: 'minimal', openai_gpt5x: 'none',   openai_o: 'low',    codex: 'minimal', claude_code: OFF,      opencode_claude: null,   xhigh_scale: OFF },
  minimal: { openai_gpt5: 'minimal', openai_gpt5x: 'low',    openai_o: 'low',    codex: 'minimal', claude_code: 'low',    opencode_claude: null,   xhigh_scale: 'minimal' },
  low:     { openai_gpt5: 'low',     openai_gpt5x: 'low',    openai_o: 'low',    codex: 'low',     claude_code: 'low',    opencode_claude: null,   xhigh_scale: 'low' },
  medium:  { openai_gpt5: 'medium',  openai_gpt5x: 'medium', openai_o: 'medium', codex: 'medium',  claude_code: 'medium', opencode_claude: null,   xhigh_scale: 'medium' },
  high:    { openai_gpt5: 'high',    openai_gpt5x: 'high',   openai_o: 'high',   codex: 'high',    claude_code: 'high',   opencode_claude: 'high', xhigh_scale: 'high' },
  xhigh:   { openai_gpt5: 'high',    openai_gpt5x: 'high',   openai_o: 'high',   codex: 'high',    claude_code: 'xhigh',  opencode_claude: 'max',  xhigh_scale: 'xhigh' },
  max:     { openai_gpt5: 'high',    openai_gpt5x: 'high',   openai_o: 'high',   codex: 'high',    claude_code: 'max',    opencode_claude: 'max',  xhigh_scale: 'xhigh' },
  ultra:   { openai_gpt5: 'high',    openai_gpt5x: 'high',   openai_o: 'high',   codex: 'high',    claude_code: 'max',    opencode_claude: 'max',  xhigh_scale: 'xhigh' },
};

/** The target's value for an effort; null (leave it out: the target's default) for null or an unknown effort. */
export function effortFor(target: EffortTarget, effort: string | null | undefined): string | null {
  if (!effort || !Object.hasOwn(TABLE, effort)) return null;
  return TABLE[effort]![target];
}
