// The services of a process that starts no server (unit tests, scripts): the parts that have a
// sensible default without one, and nothing else — no database, secret key, sandboxes, blob
// store, egress CA or model gateway (their accessors throw "service not composed"). Installed explicitly with
// installServices, like startServer's composition (test/helpers/standalone-services.ts does it
// for every test file; a server started later replaces it until it stops).
import { loadConfig, environment } from '../config.js';
import { memoryPubSub } from '../events/pubsub.js';
import { systemResolver } from '../net/outbound-guard.js';
import { idleRoutineScheduler } from '../routines/scheduling.js';
import type { TurnQueue } from '../runtime/queue.js';
import type { Services } from '../services/registry.js';

/** No worker here: an enqueued session waits for a server's recovery pass to run it. */
const noTurnQueue: TurnQueue = {
  runsTurnsHere: false,
  enqueue: async () => undefined,
  start: () => undefined,
  depth: async () => ({ waiting: 0, active: 0 }),
  close: async () => undefined,
};

export function standaloneServices(env: NodeJS.ProcessEnv = environment()): Partial<Services> {
  return {
    config: loadConfig(env),
    pubsub: memoryPubSub(),
    resolver: systemResolver,
    routineScheduler: idleRoutineScheduler,
    turnQueue: noTurnQueue,
    localRunner: null,
    redis: null,
    listenUrl: () => null,
  };
}
