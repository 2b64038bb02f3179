// Tool results of claude_code, opencode and pi in hermes' shape (src/engines/cli/core/tool-results.ts),
// on recorded real output of each CLI (test/fixtures/<engine>/tool-errors-turn.jsonl: a shell
// command that exits 3 after printing "partial", then a read of a missing file).
import { describe, expect, it } from 'vitest';
import { claudeCodeMapper } from '../../src/engines/cli/claude-code/adapter.js';
import { opencodeMapper } from '../../src/engines/cli/opencode/adapter.js';
import { piMapper } from '../../src/engines/cli/pi/adapter.js';
import type { EngineEvent } from '../../src/engines/cli/core/adapter.js';
import { expectValidEvents, fixtureLines } from '../helpers/engine-live.js';

const CASES = [
  { engine: 'claude_code', mapper: claudeCodeMapper, shellTool: 'Bash', readTool: 'Read' },
  { engine: 'opencode', mapper: opencodeMapper, shellTool: 'bash', readTool: 'read' },
  { engine: 'pi', mapper: piMapper, shellTool: 'bash', readTool: 'read' },
];

describe.each(CASES)("$engine tool results in hermes' shape (recorded real output)", ({ engine, mapper, shellTool, readTool }) => {
  it("a shell command that exits non-zero is an error with its exit code and output; a failed tool call is an error with the CLI's words", () => {
    const m = mapper();
    const events: EngineEvent[] = fixtureLines(engine, 'tool-errors-turn.jsonl').flatMap((l) => m.line(l));
    expectValidEvents(events);
    const results = events.flatMap((e) => (e.type === 'agent.tool_result' && e.fields.part.type === 'tool_result' ? [e.fields.part] : []));
    const shell = results.find((p) => p.call_id === 'toolu_e1');
    const read = results.find((p) => p.call_id === 'toolu_e2');
    expect(shell).toMatchObject({ tool_name: shellTool, status: 'error', result: { exit_code: 3, output: expect.stringContaining('partial') } });
    expect(read).toMatchObject({ tool_name: readTool, status: 'error', result: { error: expect.stringMatching(/\S/) } });
    expect(Object.keys(read?.result ?? {})).toEqual(['error']);
  });
});
