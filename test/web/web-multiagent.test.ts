// The session page of a coordinator (multiagent, issue #32) in Chromium: while the coordinator
// waits, a switcher lists its threads live; a thread's own conversation streams in when chosen;
// back on the coordinator, the thread's reply is shown as a note. The page passes the axe audit.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { CHROMIUM_MISSING, chromiumInstalled, expectContains, screenshot, seriousViolations, signIn, withWebDesk } from '../helpers/browser.js';

if (!chromiumInstalled) console.warn(CHROMIUM_MISSING);

let s: TestServer;
let fake: FakeProvider;
let page: Page;

describe.skipIf(!chromiumInstalled)('a coordinator session in the dashboard', () => {
  withWebDesk((d) => ({ s, fake, page } = d), { fakeProvider: true, signIn: false });

  it('shows the threads beside the coordinator, live, and a thread’s own conversation', async () => {
    const specialist = (await s.api('POST', '/agents', { body: { prompt: 'You are the WEB-SPECIALIST.' } })).body.agent;
    const coordinator = (
      await s.api('POST', '/agents', {
        body: {
          prompt: 'You are the WEB-COORDINATOR.',
          multiagent: { type: 'coordinator', agents: [{ type: 'agent', id: specialist.id, name: 'researcher' }] },
        },
      })
    ).body.agent;
    const session = (await s.api('POST', '/sessions', { body: { agent: coordinator.id } })).body.session;
    await signIn(page, s);
    await page.goto(`${s.url}/#/sessions/${session.id}`);
    await page.getByTestId('session-status').waitFor();
    await expectContains(page.getByTestId('session-status'), 'idle', 20_000);

    fake.enqueueFor(
      'WEB-COORDINATOR',
      { kind: 'tool_call', name: 'delegate', id: 'toolu_d', input: { agent: 'researcher', message: 'look it up' } },
      { kind: 'tool_call', name: 'wait_threads', id: 'toolu_w', input: {} },
      { kind: 'text', text: 'The researcher found it.' },
    );
    fake.enqueueFor('WEB-SPECIALIST', { kind: 'text', text: 'Found the answer in the archive, slowly.', chunks: 10, delayMs: 250 });
    await page.getByLabel('Message').fill('Find it');
    await page.getByRole('button', { name: 'Send' }).click();

    // The switcher appears while the coordinator waits; the thread's conversation streams in.
    const threadButton = page.getByTestId('session-threads').getByRole('button', { name: /researcher/ });
    await threadButton.waitFor({ timeout: 15_000 });
    await threadButton.click();
    expect(await threadButton.getAttribute('aria-pressed')).toBe('true');
    await page.locator('.bubble.user', { hasText: 'look it up' }).waitFor();
    await page.locator('.bubble.agent', { hasText: 'Found the answer in the archive, slowly.' }).waitFor({ timeout: 15_000 });
    await screenshot(page, 'multiagent-thread');
    const violations = await seriousViolations(page, {});
    expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);

    // Back on the coordinator: its own conversation with the thread's reply as a note.
    await page.getByTestId('session-threads').getByRole('button', { name: 'Coordinator' }).click();
    await page.getByText('researcher replied: Found the answer in the archive, slowly.').waitFor({ timeout: 15_000 });
    await page.locator('.bubble.agent', { hasText: 'The researcher found it.' }).waitFor({ timeout: 15_000 });
    await expectContains(page.getByTestId('session-threads'), 'researcher · idle', 15_000);
    await screenshot(page, 'multiagent-coordinator');
  }, 90_000);
});
