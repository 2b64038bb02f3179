// The session page shows where each turn's time went (model steps and tool calls with their
// durations, from the events' timestamps), in a real browser (Debian's Chromium, offline); the
// page with the timing open passes the axe audit.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents } from '../helpers/sessions.js';
import { CHROMIUM_MISSING, chromiumInstalled, expectCount, screenshot, seriousViolations, withWebDesk, type OfflineContext } from '../helpers/browser.js';

if (!chromiumInstalled) console.warn(CHROMIUM_MISSING);

let s: TestServer;
let fake: FakeProvider;
let desk: OfflineContext;
let page: Page;

describe.skipIf(!chromiumInstalled)('per-turn timing on the session page (skipped without /usr/bin/chromium)', () => {
  withWebDesk((d) => ({ s, fake, desk, page } = d), { fakeProvider: true });

  it('lists each turn with its model calls and tool calls and their durations', async () => {
    const { session } = await readySession(s);
    fake.enqueue({ kind: 'tool_call', name: 'bash', input: { command: 'sleep 0.4' } }, { kind: 'text', text: 'slept' });
    await sendText(s, session.id, 'sleep a little');
    await waitForEvents(s, session.id, 'session.status_idle');
    fake.enqueue({ kind: 'text', text: 'just text' });
    await sendText(s, session.id, 'and now just answer');
    await waitForEvents(s, session.id, 'session.status_idle', 2);

    await page.goto(`${s.url}/#/sessions/${session.id}`);
    const timing = page.getByTestId('turn-timing');
    await timing.waitFor();
    await timing.locator('summary').click();
    await expectCount(page.getByTestId('turn-timing-turn'), 2);
    const turns = await page.getByTestId('turn-timing-turn').allInnerTexts();
    // Newest first: turn 2 is one model call; turn 1 is model → bash → model.
    expect(turns[0]).toMatch(/^Turn 2 · \d+\.\d+ s \(end turn\)/);
    expect(turns[1]).toMatch(/^Turn 1 · \d+\.\d+ s \(end turn\)/);
    const steps = (await page.getByTestId('turn-timing-turn').nth(1).getByTestId('turn-timing-step').allInnerTexts()).map((t) => t.trim());
    expect(steps).toHaveLength(3);
    expect(steps[0]).toMatch(/^model call · \d+\.\d\d s$/);
    expect(steps[1]).toMatch(/^bash · \d+\.\d\d s$/);
    expect(steps[2]).toMatch(/^model call · \d+\.\d\d s$/);
    // The tool call slept 0.4 s between its call and its result.
    expect(Number(/· (\d+\.\d+) s/.exec(steps[1]!)![1])).toBeGreaterThanOrEqual(0.4);
    const turnTwoSteps = await page.getByTestId('turn-timing-turn').nth(0).getByTestId('turn-timing-step').allInnerTexts();
    expect(turnTwoSteps.map((t) => t.trim().split(' · ')[0])).toEqual(['model call']);

    const violations = await seriousViolations(page);
    expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
    await screenshot(page, 'session-turn-timing');
    expect(desk.external).toEqual([]);
  });
});
