// Fire-time arithmetic: wall-clock matching in several zones and across DST changes.
import { describe, expect, it } from 'vitest';
import { nextRuns, latestRunAtOrBefore } from '../../src/routines/cron.js';

const iso = (ds: Date[]) => ds.map((d) => d.toISOString());

describe('cron fire times', () => {
  it('weekdays at 09:00 Europe/Berlin (winter time, UTC+1)', () => {
    expect(iso(nextRuns('0 9 * * 1-5', 'Europe/Berlin', 5, new Date('2026-11-20T12:00:00Z')))).toEqual([
      '2026-11-23T08:00:00.000Z',
      '2026-11-24T08:00:00.000Z',
      '2026-11-25T08:00:00.000Z',
      '2026-11-26T08:00:00.000Z',
      '2026-11-27T08:00:00.000Z',
    ]);
  });

  it('follows the DST change: 09:00 Berlin is 08:00Z in March before the switch and 07:00Z after', () => {
    expect(iso(nextRuns('0 9 * * *', 'Europe/Berlin', 3, new Date('2026-03-28T00:00:00Z')))).toEqual([
      '2026-03-28T08:00:00.000Z',
      '2026-03-29T07:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
    ]);
  });

  it('a local time skipped by spring-forward fires once, at the first valid time after it', () => {
    expect(iso(nextRuns('30 2 * * *', 'Europe/Berlin', 3, new Date('2026-03-27T12:00:00Z')))).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
  });

  it('a local time repeated by fall-back fires once', () => {
    expect(iso(nextRuns('30 2 * * *', 'Europe/Berlin', 3, new Date('2026-10-23T12:00:00Z')))).toEqual([
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('other zones: half-hour offsets and the southern hemisphere', () => {
    expect(iso(nextRuns('0 0 * * *', 'Asia/Kolkata', 2, new Date('2026-11-20T12:00:00Z')))).toEqual(['2026-11-20T18:30:00.000Z', '2026-11-21T18:30:00.000Z']);
    expect(iso(nextRuns('0 12 * * *', 'America/New_York', 2, new Date('2026-11-01T00:00:00Z')))).toEqual([
      '2026-11-01T17:00:00.000Z',
      '2026-11-02T17:00:00.000Z',
    ]);
    expect(iso(nextRuns('0 12 * * *', 'Australia/Sydney', 1, new Date('2026-01-10T00:00:00Z')))).toEqual(['2026-01-10T01:00:00.000Z']);
  });

  it('POSIX day-of-month OR day-of-week', () => {
    expect(iso(nextRuns('0 9 1 * 1', 'UTC', 4, new Date('2026-11-20T12:00:00Z')))).toEqual([
      '2026-11-23T09:00:00.000Z',
      '2026-11-30T09:00:00.000Z',
      '2026-12-01T09:00:00.000Z',
      '2026-12-07T09:00:00.000Z',
    ]);
  });

  it('finds the latest occurrence inside a window (missed-fire catch-up)', () => {
    const at = new Date('2026-11-23T10:17:30Z');
    expect(latestRunAtOrBefore('*/5 * * * *', 'UTC', at, 60 * 60 * 1000)?.toISOString()).toBe('2026-11-23T10:15:00.000Z');
    expect(latestRunAtOrBefore('0 3 * * *', 'UTC', at, 60 * 60 * 1000)).toBeNull();
  });
});
