// "Fork from here" on the session page in a real browser (Debian's Chromium, offline): a session
// with two completed turns, forked at the first turn's reply → the page moves to the new session,
// which says where it came from and shows turn 1 but not turn 2; the API agrees (forked_from,
// history prefix). The page passes the axe audit; screenshot in test-artifacts/web/.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { readySession, sendText, waitForEvents, history } from '../helpers/sessions.js';
import {
  CHROMIUM_MISSING,
  chromiumInstalled,
  expectContains,
  expectCount,
  expectText,
  screenshot,
  seriousViolations,
  withWebDesk,
  type OfflineContext,
} from '../helpers/browser.js';

if (!chromiumInstalled) console.warn(CHROMIUM_MISSING);

let s: TestServer;
let fake: FakeProvider;
let desk: OfflineContext;
let page: Page;

describe.skipIf(!chromiumInstalled)('fork from here, in Chromium (skipped without /usr/bin/chromium)', () => {
  withWebDesk((d) => ({ s, fake, desk, page } = d), { fakeProvider: true });

  it('forks at the first reply: the new session has turn 1 and not turn 2, and says where it came from', async () => {
    const { session } = await readySession(s, { displayName: 'Forker' });
    fake.enqueue({ kind: 'text', text: 'Answer to the first path' });
    await sendText(s, session.id, 'First question');
    await waitForEvents(s, session.id, 'session.status_idle', 1);
    fake.enqueue({ kind: 'text', text: 'Answer to the second path' });
    await sendText(s, session.id, 'Second question');
    const events = await waitForEvents(s, session.id, 'session.status_idle', 2);
    const firstReply = events.find((e) => e.type === 'agent.message' && e.final && e.text === 'Answer to the first path')!;

    await page.goto(`${s.url}/#/sessions/${session.id}`);
    const reply = page.locator('.timeline .row', { has: page.locator('.bubble.agent', { hasText: 'Answer to the first path' }) });
    await reply.waitFor();
    await page.locator('.bubble.agent', { hasText: 'Answer to the second path' }).waitFor();
    const violations = await seriousViolations(page);
    expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
    await reply.getByRole('button', { name: 'Fork from here' }).click();

    // The page moves to the fork, which names its source and shows only the first path.
    await page.waitForURL((url) => /#\/sessions\/sess_/.test(url.hash) && !url.hash.includes(session.id));
    const forkId = new URL(page.url()).hash.split('/')[2]!;
    await expectContains(page.getByTestId('forked-from'), session.id);
    await page.locator('.bubble.agent', { hasText: 'Answer to the first path' }).waitFor();
    await page.locator('.bubble.user', { hasText: 'First question' }).waitFor();
    await expectCount(page.locator('.bubble', { hasText: 'Second question' }), 0);
    await expectCount(page.locator('.bubble', { hasText: 'Answer to the second path' }), 0);
    await screenshot(page, '40-session-forked');
    expect(await page.getByRole('alert').allInnerTexts()).toEqual([]);

    // Cut inside turn 1: the fork's copy of it ends there, so the fork shows (and is) idle.
    await expectText(page.getByTestId('session-status'), 'idle');
    // The API agrees: forked at that reply, its history is the prefix up to it, then its own idle.
    const fork = (await s.api('GET', `/sessions/${forkId}`)).body.session;
    expect(fork).toMatchObject({ status: 'idle', forked_from: { session_id: session.id, event_id: firstReply.id } });
    const copied = await history(s, forkId);
    expect(copied.map((e) => e.type)).toEqual([...events.slice(0, events.indexOf(firstReply) + 1).map((e) => e.type), 'session.status_idle']);
    expect(desk.external).toEqual([]);
  });
});
