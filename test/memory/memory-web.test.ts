// The memory stores page in a real browser (Debian's Chromium, offline; skipped without it):
// create a store, add a memory, open it, edit it (a stale edit is refused), see its versions
// with each one's line diff against the one before it, restore the first one from that view,
// redact one, archive the store; the page passes the axe audit.
import { describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.js';
import {
  CHROMIUM_MISSING,
  chromiumInstalled,
  expectContains,
  expectCount,
  screenshot,
  seriousViolations,
  withWebDesk,
  type OfflineContext,
} from '../helpers/browser.js';

if (!chromiumInstalled) console.warn(CHROMIUM_MISSING);

let s: TestServer;
let desk: OfflineContext;
let page: Page;

const row = (text: string): Locator => page.locator('main table.stack > tbody > tr', { hasText: text }).first();

describe.skipIf(!chromiumInstalled)('the memory stores page in Chromium (skipped without /usr/bin/chromium)', () => {
  withWebDesk((d) => ({ s, desk, page } = d));

  it('stores, memories by path, edit, versions, restore, redact, archive', async () => {
    await page.locator('nav.nav').getByRole('link', { name: 'Memory stores', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Memory stores' }).waitFor();
    await page.getByRole('button', { name: 'New memory store' }).click();
    await page.getByLabel('Name', { exact: true }).fill('prefs');
    await page.getByLabel('Description').fill('what the user likes');
    await page.getByRole('button', { name: 'Create memory store' }).click();
    await expectContains(row('prefs'), 'what the user likes');
    const store = ((await s.api('GET', '/memory-stores')).body.data as { id: string; name: string }[]).find((x) => x.name === 'prefs')!;

    await row('prefs').getByRole('button', { name: 'Memories' }).click();
    await page.getByLabel('Path', { exact: true }).fill('/preferences/style.md');
    await page.getByLabel('Memory content').fill('tabs');
    await page.getByRole('button', { name: 'Add memory' }).click();
    await page.getByRole('button', { name: '/preferences/style.md' }).click();
    const editor = page.getByRole('form', { name: 'Memory /preferences/style.md' });
    await editor.getByLabel('Content').waitFor();
    expect(await editor.getByLabel('Content').inputValue()).toBe('tabs');
    await editor.getByLabel('Content').fill('spaces');
    await editor.getByRole('button', { name: 'Save memory' }).click();
    await expectContains(page.getByRole('status'), 'Saved /preferences/style.md');
    const memory = (await s.api('GET', `/memory-stores/${store.id}/memory?path=/preferences/style.md`)).body;
    expect(memory.content).toBe('spaces');

    // An agent writes meanwhile: the page's edit, made from the old hash, is refused.
    await s.api('PATCH', `/memory-stores/${store.id}/memories/${memory.id}`, {
      body: { content: 'spaces\nagent', expected_content_sha256: memory.content_sha256 },
    });
    await editor.getByLabel('Content').fill('mine');
    await editor.getByRole('button', { name: 'Save memory' }).click();
    await expectContains(page.getByRole('alert'), 'changed since');
    expect((await s.api('GET', `/memory-stores/${store.id}/memories/${memory.id}`)).body.content).toBe('spaces\nagent');

    const versions = page.getByRole('region', { name: 'Versions' });
    await page.getByRole('button', { name: '/preferences/style.md' }).click();
    await page.getByRole('button', { name: '/preferences/style.md' }).click();
    await expectCount(versions.locator('li'), 3);
    // Each version's lines against the one before it (newest first).
    const version = (n: number) => versions.locator('li').nth(n);
    const diff = async (n: number) => {
      const details = version(n).locator('details.changes');
      if ((await details.getAttribute('open')) === null) await details.locator('summary').click();
      return version(n).locator('pre.diff');
    };
    expect(await (await diff(0)).locator('> *').allTextContents()).toEqual(['  spaces', '+ agent']);
    await expectContains(version(0).locator('details.changes > summary'), '0 removed, 1 added');
    await expectContains((await diff(1)).locator('del'), 'tabs');
    await expectContains(version(1).locator('pre.diff ins'), 'spaces');
    await expectContains(version(1).locator('details.changes > summary'), '1 removed, 1 added');
    await expectContains((await diff(2)).locator('ins'), 'tabs');
    await expectCount(version(2).locator('pre.diff del'), 0);
    await versions.locator('li').last().getByRole('button', { name: 'Restore' }).click();
    await expect.poll(async () => (await s.api('GET', `/memory-stores/${store.id}/memories/${memory.id}`)).body.content).toBe('tabs');
    await expectCount(versions.locator('li'), 4); // the restore is the newest version now
    await versions.locator('li').nth(1).getByRole('button', { name: 'Redact', exact: true }).click();
    await versions.locator('li').nth(1).getByRole('button', { name: 'Redact this version' }).click();
    await expectContains(versions.locator('li').nth(1), 'redacted');
    // The restore's diff against the agent's version (newest first: the restore, then the redacted one).
    await expectContains(versions.locator('li').first(), 'The previous version is redacted: no diff.');
    await expectContains((await diff(2)).locator('del'), 'tabs');
    await screenshot(page, '36-memory-stores');
    expect(await seriousViolations(page)).toEqual([]);

    // A session that mounts the store lists it on its page.
    const agent = (await s.api('POST', '/agents', { body: {} })).body.agent;
    const session = (
      await s.api('POST', '/sessions', { body: { agent: agent.id, resources: [{ type: 'memory_store', memory_store_id: store.id, access: 'read_only' }] } })
    ).body.session;
    await page.goto(`${s.url}/#/sessions/${session.id}`);
    const mounts = page.getByRole('region', { name: 'Memory stores' });
    await expectContains(mounts, '/workspace/memory/prefs');
    await expectContains(mounts, 'read only');
    expect(await seriousViolations(page)).toEqual([]);

    await page.locator('nav.nav').getByRole('link', { name: 'Memory stores', exact: true }).click();
    await row('prefs').getByRole('button', { name: 'Archive', exact: true }).click();
    await row('prefs')
      .getByRole('button', { name: /^Archive / })
      .click();
    await expect.poll(async () => (await s.api('GET', `/memory-stores/${store.id}`)).body.archived_at).toEqual(expect.any(String));
  });
});
