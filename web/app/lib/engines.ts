// The engine catalog (engines query): which models each agentType accepts, and its default.
import { doc, gql } from '../../shared/graphql.js';

export interface Engine {
  agentType: string;
  defaultModel: string;
  models: { id: string; provider: string }[];
}

const ENGINES = doc`query Engines { engines { agentType defaultModel models { id provider } } }`;

let cached: Promise<Engine[]> | null = null;
export function engines(): Promise<Engine[]> {
  cached ??= gql<{ engines: Engine[] }>(ENGINES).then(
    (d) => d.engines,
    (err) => {
      cached = null;
      throw err;
    },
  );
  return cached;
}
