// What an agent is told when a turn carries a user.define_outcome (issue #33): the task, and the
// rubric a grader will check its work against. Every engine gives it as the turn's input.
import type { SessionEvent } from '../events/types.js';

export function outcomePrompt(e: Extract<SessionEvent, { type: 'user.define_outcome' }>): string {
  return `${e.description}\n\n<outcome-rubric>\nWhen you end your turn, a grader checks your final reply and the files under /workspace against these criteria:\n${e.rubric}\n</outcome-rubric>`;
}
