// The skeleton every CLI engine's output mapper shares: the CLI prints JSON lines (one object a
// line; OpenClaw's summary is pretty-printed, so it reads raw lines), the engine's reader turns
// each into session events and remembers the CLI's conversation id, and the turn ends the same
// way for all: finished (the CLI said so and exited 0) → end_turn; the gateway's budget stop in
// its words → budget_reached (src/gateway/budget-stop.ts); else one engine_error that quotes the
// CLI's own words about the failure.
import { BUDGET_STOP, stoppedForBudget } from '../../../gateway/budget-stop.js';
import { type CliOutputMapper, type EngineEvent, jsonLine } from './adapter.js';

/** What the CLI said about how its turn went, read once it has exited. */
export interface TurnOutcome {
  /** The CLI said the turn finished well (its own success record). */
  finished: boolean;
  /** The CLI's words about what failed, if it said any (the session.error quotes them). */
  failure: string | null;
  /** More of its words where the gateway's budget stop may show (not quoted). */
  budgetHints?: (string | null)[];
}

/** One engine's reading of its CLI's output. */
export interface JsonLinesReader {
  /** One JSON object of the output → the session events it means (often none). */
  event?(ev: Record<string, any>): EngineEvent[];
  /** Instead of `event`: each raw line, for output that is not one object a line. */
  text?(line: string): EngineEvent[];
  /** The CLI's conversation id once it has said it. */
  resumeId(): string | null;
  outcome(): TurnOutcome;
}

export function jsonLinesMapper(engine: string, reader: JsonLinesReader): CliOutputMapper {
  return {
    get resumeId() {
      return reader.resumeId();
    },
    line(text) {
      if (reader.text) return reader.text(text);
      const ev = jsonLine(text);
      return ev && reader.event ? reader.event(ev) : [];
    },
    finish(exitCode) {
      const { finished, failure, budgetHints = [] } = reader.outcome();
      if (finished && exitCode === 0) return { stop: { type: 'end_turn' }, error: null };
      if ([failure, ...budgetHints].some((words) => stoppedForBudget(words))) return { stop: BUDGET_STOP, error: null };
      const message = failure ? `${engine}: ${failure}` : `${engine} exited with code ${exitCode ?? 'none (killed)'} without finishing the turn`;
      return { stop: { type: 'retries_exhausted' }, error: { type: 'engine_error', message, retry_status: 'exhausted' } };
    },
  };
}
