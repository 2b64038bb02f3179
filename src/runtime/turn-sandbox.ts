// A turn whose session has no sandbox any more (its host lost it, a restart without it) gets a
// new one; the wait is announced on the session as progress (agent.status, a `status` part), as
// the spec names agent.status for, before the engine's own events follow.
import type { Sandbox } from '../sandbox/driver.js';
import type { EventFields } from '../events/types.js';
import { sandboxDriver } from '../sandbox/current-driver.js';

type StatusEmit = (type: 'agent.status', fields: EventFields<'agent.status'>) => Promise<unknown>;

export async function newTurnSandbox(session: { id: string; vcpus: number | null; memoryMb: number | null }, emit: StatusEmit): Promise<Sandbox> {
  await emit('agent.status', {
    part: { type: 'status', index: 0, level: 'working', text: 'starting a new sandbox for this session (its previous one is gone)' },
  });
  return sandboxDriver().provision({ sessionId: session.id, vcpus: session.vcpus, memoryMb: session.memoryMb });
}
