// openclaw: the adapter's mapping of real `openclaw agent --local --json` output (recorded from
// OpenClaw 2026.9.6 against the fake provider, in test/fixtures/openclaw: one pretty-printed
// summary at the end of the run) to session events, and its invocation. The real CLI runs end
// to end over HTTP in the jail in test/engines/cli-turns.test.ts (its CLI_ENGINE_CASES entry).
import { describe, expect, it } from 'vitest';
import { openclawAdapter, openclawMapper } from '../../src/engines/cli/openclaw.js';
import { engineAdapter } from '../../src/engines/cli/registry.js';
import { uninstallableEngine } from '../../src/engines/cli/unavailable.js';
import { expectValidEvents, fixtureLines } from '../helpers/engine-live.js';

function mapAll(lines: string[]) {
  const mapper = openclawMapper();
  const events = lines.flatMap((l) => mapper.line(l));
  return { mapper, events };
}

describe('openclaw output mapping (recorded real output)', () => {
  it('a turn with an exec call: the call and its result (names only: the summary has no arguments or output), then the reply; the session id; end_turn', () => {
    const { mapper, events } = mapAll(fixtureLines('openclaw', 'tool-turn.json'));
    expectValidEvents(events);
    expect(events.map((e) => e.type)).toEqual(['agent.tool_use', 'agent.tool_result', 'agent.message']);
    const [use, result, reply] = events;
    expect(use!.fields).toMatchObject({ part: { type: 'tool_call', index: 0, tool_name: 'exec', args: {} } });
    const callId = (use!.fields as any).part.call_id;
    expect(result!.fields).toMatchObject({ part: { type: 'tool_result', index: 0, call_id: callId, tool_name: 'exec', status: 'ok', result: {} } });
    expect(reply!.fields).toMatchObject({ final: true, text: 'I wrote it.' });
    expect(mapper.resumeId).toBe('s2');
    expect(mapper.finish(0)).toEqual({ stop: { type: 'end_turn' }, error: null });
  });

  it('a text turn: one complete message; nothing before the summary is complete', () => {
    const lines = fixtureLines('openclaw', 'text-turn.json');
    const mapper = openclawMapper();
    // Every line but the closing brace yields nothing: the summary comes whole at the end.
    expect(lines.slice(0, -2).flatMap((l) => mapper.line(l))).toEqual([]);
    const events = lines.slice(-2).flatMap((l) => mapper.line(l));
    expect(events.map((e) => e.type)).toEqual(['agent.message']);
    expect(events[0]!.fields).toMatchObject({ final: true, text: 'pong' });
    expect(mapper.resumeId).toBe('s1');
  });

  it('failures: a budget refusal ends budget_reached; an error envelope or no summary ends retries_exhausted', () => {
    const budget = openclawMapper();
    for (const l of JSON.stringify({ ok: false, error: { type: 'cli_error', message: "402 the session's budget is reached" } }, null, 2).split('\n')) budget.line(l);
    expect(budget.finish(1)).toEqual({ stop: { type: 'budget_reached' }, error: null });

    const failed = openclawMapper();
    for (const l of JSON.stringify({ ok: false, error: { type: 'cli_error', message: 'the session credential is revoked' } }, null, 2).split('\n')) failed.line(l);
    expect(failed.finish(1)).toEqual({ stop: { type: 'retries_exhausted' }, error: { type: 'engine_error', retry_status: 'exhausted', message: 'openclaw: the session credential is revoked' } });
    expect(openclawMapper().finish(null).error?.message).toBe('openclaw exited with code none (killed) without finishing the turn');
  });

  it('the invocation: a local JSON turn by session id, state and config under home, tools in /workspace, the gateway and the key variable in its config', () => {
    expect(engineAdapter('openclaw')).toBe(openclawAdapter);
    expect(uninstallableEngine('openclaw')).toBeNull();
    expect(openclawAdapter.cli).toMatchObject({ npm: 'openclaw', version: '2026.9.6', nodeMajor: 24 });
    const inv = openclawAdapter.invocation(
      { prompt: 'go', systemPrompt: 'be kind', model: 'claude-sonnet-4-5', reasoningEffort: null, resumeId: 'conv-1' },
      { binPath: '/opt/engines/openclaw', home: '/w/.agent', gatewayBaseUrl: 'http://127.0.0.1:3128/gateway/anthropic' },
    );
    expect(inv.argv.join(' ')).toBe('/opt/engines/openclaw agent --local --json --session-id conv-1 --message-file /w/.agent/message.txt');
    expect(inv.env).toEqual({ OPENCLAW_STATE_DIR: '/w/.agent/state', OPENCLAW_CONFIG_PATH: '/w/.agent/openclaw.json' });
    expect(inv.files['/w/.agent/message.txt']).toBe('go');
    expect(inv.files['/w/.agent/workspace/AGENTS.md']).toBe('be kind');
    const config = JSON.parse(inv.files['/w/.agent/openclaw.json']!);
    expect(config.models.providers.anthropic).toMatchObject({ baseUrl: 'http://127.0.0.1:3128/gateway/anthropic', apiKey: '${AGENT_SERVICE_TOKEN}', api: 'anthropic-messages' });
    expect(config.agents.defaults).toMatchObject({ workspace: '/w/.agent/workspace', cwd: '/workspace', model: { primary: 'anthropic/claude-sonnet-4-5' } });
    // A first turn picks the conversation id it will resume.
    const first = openclawAdapter.invocation({ prompt: 'go', systemPrompt: '', model: 'gpt-5', reasoningEffort: null, resumeId: null }, { binPath: 'oc', home: '/h', gatewayBaseUrl: 'http://g/gateway/openai/v1' });
    expect(first.argv[first.argv.indexOf('--session-id') + 1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(first.files['/h/openclaw.json']!).models.providers.openai).toMatchObject({ baseUrl: 'http://g/gateway/openai/v1', api: 'openai-responses' });
  });
});
