// The engine catalog (engines query): which models each agentType accepts, and its default.
import { gql } from '../../shared/graphql.js';

export interface Engine {
  agentType: string;
  defaultModel: string;
  models: { id: string; provider: string }[];
}

let cached: Promise<Engine[]> | null = null;
export function engines(): Promise<Engine[]> {
  cached ??= gql<{ engines: Engine[] }>('query Engines { engines { agentType defaultModel models { id provider } } }').then((d) => d.engines, (err) => {
    cached = null;
    throw err;
  });
  return cached;
}
