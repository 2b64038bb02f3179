// The outcome grader (issue #33): the service's own model loop, in a context of its own: the
// rubric, the task's description and the agent's final reply, nothing of the agent's
// conversation; read-only file tools over the session's /workspace through the sandbox driver
// (both drivers: readFile and a listing command). Every call goes through the metered gateway
// (priced, counted against the session's budget and a routine fire's allowance). The verdict is
// a JSON object, parsed robustly; a malformed one is asked for again once, then GraderError.
import { z } from 'zod';
import { meteredModelStream, type MeterScope } from '../gateway/metering.js';
import { modelProvider } from '../gateway/models.js';
import type { ChatMessage, ContentBlock, ToolSpec } from '../gateway/types.js';
import type { Sandbox } from '../sandbox/driver.js';
import { evaluationResult, outcomeCriterion } from '../events/types.js';

export const verdictSchema = z.object({
  result: evaluationResult,
  criteria: z.array(outcomeCriterion.extend({ explanation: z.string().default('') })).max(200),
  summary: z.string().max(20_000).default(''),
});
export type Verdict = z.output<typeof verdictSchema>;

/** The evaluation could not produce a verdict (malformed twice, too many tool calls). */
export class GraderError extends Error {}

/** Marks a grader's request (the fake provider scripts its answers by it). */
export const GRADER_MARKER = '[outcome-grader]';

const SYSTEM = `${GRADER_MARKER} You are a strict grader. You check whether an agent's work meets every criterion of a rubric.
You see the task, the rubric and the agent's final reply; you may read files under /workspace with the tools list_files and read_file (read-only).
Grade each criterion of the rubric separately. Then answer with ONLY one JSON object, no other text:
{"result": "satisfied" | "needs_revision" | "failed", "criteria": [{"criterion": "...", "passed": true|false, "explanation": "..."}], "summary": "..."}
result: satisfied when every criterion passes; needs_revision when the agent can fix what fails; failed when the task cannot be done.`;

const TOOLS: ToolSpec[] = [
  {
    name: 'list_files',
    description: 'Lists files and directories under a path of /workspace (two levels deep).',
    inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'default /workspace' } } },
  },
  {
    name: 'read_file',
    description: 'Reads a text file under /workspace (at most 100 KB).',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
];

const MAX_CALLS = 12;
const READ_LIMIT = 100_000;

export interface GraderInput {
  scope: MeterScope;
  model: string;
  description: string;
  rubric: string;
  iteration: number;
  maxIterations: number;
  finalReply: string;
  sandbox: () => Promise<Sandbox | null>;
  signal: AbortSignal;
}

/** A path under /workspace, or null (anything outside, `..`, a NUL). */
function workspacePath(p: unknown): string | null {
  const raw = typeof p === 'string' && p ? p : '/workspace';
  const abs = raw.startsWith('/') ? raw : `/workspace/${raw}`;
  if (abs.includes('\0') || abs.split('/').includes('..')) return null;
  return abs === '/workspace' || abs.startsWith('/workspace/') ? abs : null;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

async function runTool(name: string, input: Record<string, unknown>, sandbox: () => Promise<Sandbox | null>): Promise<{ content: string; isError: boolean }> {
  const path = workspacePath(input.path);
  if (!path) return { content: 'the path must be under /workspace', isError: true };
  const box = await sandbox();
  if (!box) return { content: 'the session has no sandbox', isError: true };
  try {
    if (name === 'read_file') {
      const data = await box.readFile(path, { maxBytes: READ_LIMIT });
      return { content: data.toString('utf8'), isError: false };
    }
    if (name === 'list_files') {
      const r = await box.exec(`find ${quote(path)} -maxdepth 2 -not -path '*/.*' | head -500`);
      return { content: r.stdout || '(empty)', isError: r.exitCode !== 0 };
    }
    return { content: `unknown tool ${name}`, isError: true };
  } catch (err) {
    return { content: err instanceof Error ? err.message : String(err), isError: true };
  }
}

/** The first JSON object of a text (fences and prose around it tolerated), checked against the verdict's shape. */
export function parseVerdict(text: string): Verdict | null {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  try {
    const parsed = verdictSchema.safeParse(JSON.parse(text.slice(start, end + 1)));
    if (!parsed.success) return null;
    const v = parsed.data;
    // A "satisfied" with a failing criterion is not: the criteria decide.
    if (v.result === 'satisfied' && v.criteria.some((c) => !c.passed)) return { ...v, result: 'needs_revision' };
    return v;
  } catch {
    return null;
  }
}

export async function runGrader(input: GraderInput): Promise<Verdict> {
  const messages: ChatMessage[] = [
    {
      role: 'user',
      content: [
        {
          type: 'text',
          text: `Evaluation ${input.iteration} of at most ${input.maxIterations}.\n\n<task>\n${input.description}\n</task>\n\n<rubric>\n${input.rubric}\n</rubric>\n\n<agent-final-reply>\n${input.finalReply || '(no reply)'}\n</agent-final-reply>`,
        },
      ],
    },
  ];
  let retried = false;
  for (let call = 0; call < MAX_CALLS; call++) {
    let text = '';
    const calls: Extract<ContentBlock, { type: 'tool_use' }>[] = [];
    const request = { provider: modelProvider(input.model), model: input.model, system: SYSTEM, messages, tools: TOOLS, maxTokens: 4096 };
    for await (const ev of meteredModelStream(input.scope, request, input.signal)) {
      if (ev.type === 'text_delta') text += ev.text;
      else if (ev.type === 'tool_call') calls.push({ type: 'tool_use', id: ev.id, name: ev.name, input: ev.input });
    }
    if (input.signal.aborted) throw new Error('interrupted');
    if (calls.length) {
      messages.push({ role: 'assistant', content: [...(text ? [{ type: 'text' as const, text }] : []), ...calls] });
      const results: ContentBlock[] = [];
      for (const c of calls) {
        const r = await runTool(c.name, c.input, input.sandbox);
        results.push({ type: 'tool_result', toolUseId: c.id, content: r.content, isError: r.isError });
      }
      messages.push({ role: 'user', content: results });
      continue;
    }
    const verdict = parseVerdict(text);
    if (verdict) return verdict;
    if (retried) throw new GraderError("the grader's verdict was malformed twice (expected one JSON object with result, criteria and summary)");
    retried = true;
    messages.push({ role: 'assistant', content: [{ type: 'text', text: text || '(empty)' }] });
    messages.push({
      role: 'user',
      content: [
        {
          type: 'text',
          text: 'That was not a valid verdict. Answer with ONLY the JSON object {"result", "criteria", "summary"} described in your instructions.',
        },
      ],
    });
  }
  throw new GraderError(`the grader made more than ${MAX_CALLS} calls without a verdict`);
}
