// Which Engine runs a session's turns, by its agentType: hermes (the service's own loop) or, for
// every other type, the CLI engine (an engine without a CLI here ends its turn saying so).
import type { Engine } from './engine.js';
import { hermesEngine } from './hermes/engine.js';
import { cliEngine } from './cli/engine.js';

export function engineFor(agentType: string): Engine {
  return agentType === 'hermes' ? hermesEngine : cliEngine;
}
