// Cron schedules: 5-field POSIX expressions in an IANA time zone, matched on wall-clock time at
// minute granularity (croner handles DST: a local time skipped by spring-forward fires at the
// first valid time after it, a local time repeated by fall-back fires once).
import { Cron } from 'croner';
import { CronExpressionParser } from 'cron-parser';
import { AppError } from '../errors.js';

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function cronOf(expression: string, timezone: string): Cron {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) throw new AppError('invalid_request', 'schedule.expression must have 5 fields (minute hour day-of-month month day-of-week)');
  if (!isTimeZone(timezone)) throw new AppError('invalid_request', `schedule.timezone ${JSON.stringify(timezone)} is not an IANA time zone`);
  try {
    // legacyMode: POSIX semantics (day-of-month OR day-of-week when both are restricted).
    return new Cron(fields.join(' '), { timezone, paused: true, legacyMode: true });
  } catch (err) {
    throw new AppError('invalid_request', `schedule.expression is not a valid cron expression: ${(err as Error).message}`);
  }
}

export function validateSchedule(expression: string, timezone: string): void {
  cronOf(expression, timezone).stop();
  // With Redis, BullMQ's job schedulers run the expression through cron-parser (the version
  // pinned here is BullMQ's own), which refuses some that croner accepts (`0,0 * * * *`):
  // refuse those here with 400 rather than fail (500) when the schedule is registered.
  try {
    CronExpressionParser.parse(expression.trim().split(/\s+/).join(' '), { tz: timezone });
  } catch (err) {
    throw new AppError('invalid_request', `schedule.expression is not a valid cron expression: ${(err as Error).message}`);
  }
}

/** The next `count` fire times strictly after `after`. */
export function nextRuns(expression: string, timezone: string, count: number, after: Date = new Date()): Date[] {
  const cron = cronOf(expression, timezone);
  const runs = cron.nextRuns(count, after);
  cron.stop();
  return runs;
}

export function nextRun(expression: string, timezone: string, after: Date = new Date()): Date | null {
  return nextRuns(expression, timezone, 1, after)[0] ?? null;
}

/** The latest fire time at or before `at` within `within` ms, if any (missed-fire handling). */
export function latestRunAtOrBefore(expression: string, timezone: string, at: Date, within: number): Date | null {
  let candidate: Date | null = null;
  let cursor = new Date(at.getTime() - within - 1000);
  for (;;) {
    const next = nextRun(expression, timezone, cursor);
    if (!next || next.getTime() > at.getTime()) return candidate;
    candidate = next;
    cursor = next;
  }
}
