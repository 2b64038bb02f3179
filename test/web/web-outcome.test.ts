// The session page shows an outcome (issue #33) in a real browser (Debian's Chromium, offline):
// after a revision and a satisfied evaluation, the outcome's status, its iterations and each
// evaluation's per-criterion verdict; the page passes the axe audit.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { readySession, waitForEvents } from '../helpers/sessions.js';
import { CHROMIUM_MISSING, chromiumInstalled, expectCount, expectText, screenshot, seriousViolations, withWebDesk } from '../helpers/browser.js';

if (!chromiumInstalled) console.warn(CHROMIUM_MISSING);

let s: TestServer;
let fake: FakeProvider;
let page: Page;

describe.skipIf(!chromiumInstalled)('the session page shows its outcome (skipped without /usr/bin/chromium)', () => {
  withWebDesk((d) => ({ s, fake, page } = d), { fakeProvider: true, server: () => ({ anthropicApiKey: 'sk' }) });

  it('status, iterations and every criterion of each evaluation', async () => {
    const { session } = await readySession(s);
    await s.api('POST', `/sessions/${session.id}/events`, {
      body: {
        events: [
          { type: 'user.define_outcome', description: 'Write the changelog', rubric: '- lists the fixes\n- names the version\ngrader-script: fail pass' },
        ],
      },
    });
    await waitForEvents(s, session.id, 'session.status_idle', 1, 20_000);
    await page.goto(`${s.url}/#/sessions/${session.id}`);
    const outcome = page.getByRole('region', { name: 'Outcome' });
    await expectText(outcome.getByTestId('outcome-status'), 'satisfied');
    await expectText(outcome.getByTestId('outcome-iterations'), 'Evaluations: 2 of at most 3');
    await expectCount(outcome.getByTestId('outcome-evaluation'), 2);
    const criteria = outcome.getByTestId('outcome-criterion');
    await expectCount(criteria, 4);
    expect(await criteria.allInnerTexts()).toEqual([
      '✗ not passed: lists the fixes — not yet: lists the fixes',
      '✓ passed: names the version — met',
      '✓ passed: lists the fixes — met',
      '✓ passed: names the version — met',
    ]);
    await screenshot(page, 'session-outcome');
    const violations = await seriousViolations(page);
    expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
  });
});
