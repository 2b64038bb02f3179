// The dashboard's management pages in a real browser (Debian's Chromium, offline): for each of
// environments, vaults, routines, webhooks, files, skills, model subscriptions and channels,
// create in the page → it appears in the list (and in the API) → edit or act on it → delete →
// it is gone; each page passes the axe audit and leaves a screenshot in test-artifacts/web/.
process.env.OUTBOUND_ALLOW ??= '127.0.0.0/8,::1'; // the webhook receiver and fake Telegram are on loopback
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.js';
import { startFakeTelegram, type FakeTelegram } from '../fake-platforms/telegram.js';
import {
  CHROMIUM_MISSING,
  chromiumInstalled,
  expectContains,
  expectCount,
  expectText,
  offlineContext,
  screenshot,
  seriousViolations,
  signIn,
  withWebDesk,
  type OfflineContext,
} from '../helpers/browser.js';

if (!chromiumInstalled) console.warn(CHROMIUM_MISSING);

const BOT_TOKEN = '700200:AAE-web-dashboard-token_x';
let s: TestServer;
let tg: FakeTelegram;
let browser: Browser;
let desk: OfflineContext;
let page: Page;
let receiver: http.Server;
let receiverUrl = '';
const received: string[] = [];

async function audit(name: string) {
  const violations = await seriousViolations(page);
  expect(violations, `${name}: ${JSON.stringify(violations, null, 2)}`).toEqual([]);
}

async function open(section: string, heading: string) {
  await page.locator('nav.nav').getByRole('link', { name: section, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await expectCount(page.getByRole('status').filter({ hasText: 'Loading' }), 0);
}

/** No error on the page (its text in the failure when there is one). */
async function noAlert() {
  await page.waitForTimeout(50);
  expect(await page.getByRole('alert').allInnerTexts()).toEqual([]);
}

const row = (text: string): Locator => page.locator('main table.stack > tbody > tr', { hasText: text }).first();

/** Deletes (or archives) a row through the two-step button; the row is then gone from the list. */
async function remove(text: string, label = 'Delete') {
  const r = row(text);
  await r.getByRole('button', { name: label, exact: true }).click();
  await r.getByRole('button', { name: new RegExp(`^${label} `) }).click();
  await expectContains(page.getByRole('status'), `${label} `);
  await expectCount(page.locator('main table.stack > tbody > tr', { hasText: text }), 0);
}

describe.skipIf(!chromiumInstalled)('the management pages in Chromium (skipped without /usr/bin/chromium)', () => {
  let agentId = '';

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(body);
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    tg = await startFakeTelegram();
    tg.addBot(BOT_TOKEN, 'web_dashboard_bot');
  });
  // Registered first, so run last: after the browser and the server are stopped.
  afterAll(async () => {
    await tg?.close();
    await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  });
  withWebDesk((d) => ({ s, browser, desk, page } = d), {
    server: () => ({ telegramApiBaseUrl: tg.url }),
    seed: async (started) => {
      const agent = await started.api('POST', '/agents', { body: { displayName: 'Routine Runner' } });
      expect(agent.status).toBe(201);
      agentId = agent.body.agent.id;
    },
  });

  it('environments: create with packages and hosts, edit, archive', async () => {
    await open('Environments', 'Environments');
    await page.getByRole('button', { name: 'New environment' }).click();
    await page.getByLabel('Name', { exact: true }).fill('build-tools');
    await page.getByLabel('apt packages').fill('git\njq');
    await page.getByLabel('Allowed hosts').fill('pypi.org');
    await audit('new environment form');
    await page.getByRole('button', { name: 'Create environment' }).click();
    await expectContains(row('build-tools'), 'apt git, apt jq');
    const listed = (await s.api('GET', '/environments')).body.data as {
      id: string;
      name: string;
      packages: { apt: string[] };
      network: { allowed_hosts: string[] };
    }[];
    const env = listed.find((e) => e.name === 'build-tools')!;
    expect(env.packages.apt).toEqual(['git', 'jq']);

    await row('build-tools').getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Name', { exact: true }).fill('build-tools-2');
    await page.getByRole('button', { name: 'Save' }).click();
    await expectContains(row('build-tools-2'), 'pypi.org');
    expect((await s.api('GET', `/environments/${env.id}`)).body.name).toBe('build-tools-2');
    await screenshot(page, '30-environments');
    await audit('environments page');

    await remove('build-tools-2', 'Archive');
    expect((await s.api('GET', `/environments/${env.id}`)).body.archived_at).toEqual(expect.any(String));
    // Archived ones stay reachable behind the toggle.
    await page.getByLabel('Show archived environments').check();
    await expectContains(row('build-tools-2'), 'archived');
  });

  it('vaults: create, set a write-only credential (never shown), delete it, delete the vault', async () => {
    await open('Vaults', 'Vaults');
    await page.getByRole('button', { name: 'New vault' }).click();
    await page.getByLabel('Name', { exact: true }).fill('github');
    await page.getByRole('button', { name: 'Create vault' }).click();
    await row('github').getByRole('button', { name: 'Credentials' }).click();
    const detail = page.getByRole('region', { name: 'Credentials: github' });
    await detail.getByLabel('Key').fill('GITHUB');
    await detail.getByLabel('Host').fill('api.github.com');
    await detail.getByLabel('Header').fill('Authorization');
    await detail.getByLabel('Value prefix').fill('Bearer ');
    await detail.getByLabel('Value', { exact: true }).fill('ghp_never_shown_value');
    await detail.getByRole('button', { name: 'Save credential' }).click();
    await expectContains(detail.locator('tbody tr'), 'api.github.com');
    await expectContains(row('github'), 'GITHUB → api.github.com');
    expect(await page.content()).not.toContain('ghp_never_shown_value');
    const vault = ((await s.api('GET', '/vaults')).body.data as { id: string; name: string; credentials: { key: string }[] }[]).find(
      (v) => v.name === 'github',
    )!;
    // The prefix is kept as typed (its trailing space too): the header the sandbox's requests get.
    const { vaultRules } = await import('../../src/egress/vault-rules.js');
    expect((await vaultRules([vault.id])).map((r) => [r.host, r.header, r.value])).toEqual([
      ['api.github.com', 'Authorization', 'Bearer ghp_never_shown_value'],
    ]);
    expect(vault.credentials.map((c) => c.key)).toEqual(['GITHUB']);
    await screenshot(page, '31-vaults');
    await audit('vaults page');

    await detail.getByRole('button', { name: 'Delete', exact: true }).click();
    await detail.getByRole('button', { name: 'Delete GITHUB' }).click();
    await expectContains(detail, 'No credentials yet.');
    await remove('github');
    expect((await s.api('GET', `/vaults/${vault.id}`)).status).toBe(404);
  });

  it('routines: create for an agent, pause, resume, run now (its run listed), edit, archive', async () => {
    await open('Routines', 'Routines');
    await page.getByRole('button', { name: 'New routine' }).click();
    await page.getByLabel('Name', { exact: true }).fill('nightly digest');
    await page.getByLabel('Agent').selectOption({ label: 'Routine Runner' });
    await page.getByLabel('Message').fill('Summarize the day.');
    await page.getByLabel('Schedule (cron)').fill('0 3 * * *');
    await page.getByRole('button', { name: 'Create routine' }).click();
    const r = row('nightly digest');
    await expectContains(r, 'Routine Runner');
    await expectContains(r, 'active');
    const routine = ((await s.api('GET', '/routines')).body.data as { id: string; name: string; schedule: { expression: string } | null }[]).find(
      (x) => x.name === 'nightly digest',
    )!;
    expect(routine.schedule?.expression).toBe('0 3 * * *');

    await r.getByRole('button', { name: 'Pause' }).click();
    await expectContains(r, 'paused');
    expect((await s.api('GET', `/routines/${routine.id}`)).body.status).toBe('paused');
    await r.getByRole('button', { name: 'Resume' }).click();
    await expectContains(r, 'active');

    await r.getByRole('button', { name: 'Run now' }).click();
    await expectContains(page.getByRole('status'), 'Run now nightly digest: done.');
    await r.getByRole('button', { name: 'Runs' }).click();
    const runs = page.getByRole('region', { name: 'Runs: nightly digest' });
    await expectContains(runs.locator('tbody tr'), 'manual');
    expect((await s.api('GET', `/routines/${routine.id}/runs`)).body.data).toHaveLength(1);

    await r.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Name', { exact: true }).fill('nightly digest 2');
    await page.getByLabel('Schedule (cron)').fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await expectContains(row('nightly digest 2'), 'by hand only');
    expect((await s.api('GET', `/routines/${routine.id}`)).body).toMatchObject({ name: 'nightly digest 2', schedule: null });
    await screenshot(page, '32-routines');
    await audit('routines page');

    await remove('nightly digest 2', 'Archive');
    expect((await s.api('GET', `/routines/${routine.id}`)).body.archived_at).toEqual(expect.any(String));
  });

  it('webhooks: create (the secret shown once), a delivery is listed, disable, delete', async () => {
    await open('Webhooks', 'Webhooks');
    await page.getByRole('button', { name: 'New webhook endpoint' }).click();
    await page.getByLabel('URL').fill(`${receiverUrl}/hook`);
    await page.getByRole('checkbox', { name: 'agent_created' }).check();
    await page.getByRole('button', { name: 'Create webhook endpoint' }).click();
    await expectText(page.getByTestId('secret-value'), /^whsec_/);
    await page.getByRole('button', { name: 'Done' }).click();
    const r = row(`${receiverUrl}/hook`);
    await expectContains(r, 'agent_created');
    // An event it subscribes to: its delivery shows up under the endpoint.
    const delivered = await s.api('POST', '/agents', { body: { displayName: 'Delivered Agent' } });
    expect(delivered.status).toBe(201);
    const agentCreated: string = delivered.body.agent.id;
    await r.getByRole('button', { name: 'Deliveries' }).click();
    const deliveries = page.getByRole('region', { name: `Deliveries: ${receiverUrl}/hook` });
    const succeeded = deliveries.locator('tbody tr', { hasText: 'succeeded' });
    for (let i = 0; i < 100 && !(await succeeded.count()); i++) {
      await page.waitForTimeout(100);
      // Coming back to the page reloads the list and the open panel.
      await page.evaluate(() => window.dispatchEvent(new Event('focus')));
    }
    await expectContains(succeeded, 'agent.created');
    expect(received.some((b) => b.includes(agentCreated))).toBe(true);

    await r.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('combobox', { name: 'Status' }).selectOption('disabled');
    await page.getByRole('button', { name: 'Save' }).click();
    await expectContains(row(`${receiverUrl}/hook`), 'disabled');
    await screenshot(page, '33-webhooks');
    await audit('webhooks page');
    await remove(`${receiverUrl}/hook`);
    expect((await s.api('GET', '/webhooks')).body.data).toEqual([]);
  });

  it('files: upload from the page, listed, delete', async () => {
    await open('Files', 'Files');
    await page.getByRole('button', { name: 'New file' }).click();
    await page
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello from the dashboard\n') });
    await page.getByRole('button', { name: 'Upload' }).click();
    await noAlert();
    await expectContains(row('notes.txt'), 'text/plain');
    const files = (await s.api('GET', '/files')).body.data as { id: string; filename: string; size_bytes: number }[];
    expect(files.find((f) => f.filename === 'notes.txt')?.size_bytes).toBe(25);
    await screenshot(page, '34-files');
    await audit('files page');
    await remove('notes.txt');
    expect(((await s.api('GET', '/files')).body.data as { filename: string }[]).map((f) => f.filename)).not.toContain('notes.txt');
  });

  it('skills: create from a SKILL.md, upload a new revision, delete', async () => {
    await open('Skills', 'Skills');
    await page.getByRole('button', { name: 'New skill' }).click();
    const skillMd = (description: string) => `---\nname: web-skill\ndescription: ${description}\n---\n\n# web-skill\n`;
    await page.getByLabel('SKILL.md').fill(skillMd('First version.'));
    await page.getByRole('button', { name: 'Create skill' }).click();
    await noAlert();
    const r = row('web-skill');
    await r.waitFor();
    await r.getByRole('button', { name: 'New revision' }).click();
    await page.getByLabel('SKILL.md').fill(skillMd('Second version.'));
    await page.getByRole('button', { name: 'Save' }).click();
    await r.getByRole('button', { name: 'Revisions' }).click();
    const revisions = page.getByRole('region', { name: 'Revisions: web-skill' });
    await expectCount(revisions.locator('tbody tr'), 2);
    await expectContains(revisions.locator('tbody tr'), 'Second version.');
    const skill = ((await s.api('GET', '/skills')).body.skills as { id: string; displayName: string }[]).find((x) => x.displayName === 'web-skill')!;
    expect((await s.api('GET', `/skills/${skill.id}/revisions`)).body.revisions).toHaveLength(2);
    await screenshot(page, '35-skills');
    await audit('skills page');
    await remove('web-skill');
    expect((await s.api('GET', `/skills/${skill.id}`)).status).toBe(404);
  });

  it('model subscriptions: connect with a write-only key, use for new sessions, disconnect', async () => {
    await open('Model subscriptions', 'Model subscriptions');
    await page.getByRole('button', { name: 'New subscription' }).click();
    await page.getByLabel('Provider').selectOption('openai');
    await page.getByLabel('API key').fill('sk-never-shown-key');
    await page.getByLabel('Label').fill('team key');
    await page.getByRole('button', { name: 'Connect' }).click();
    const r = row('openai');
    await expectContains(r, 'team key');
    await r.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel(/New sessions on this provider/).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expectText(row('openai').locator('td[data-label="For new sessions"]'), 'yes');
    expect(await page.content()).not.toContain('sk-never-shown-key');
    const subscriptions = () => s.api('GET', '/model-subscriptions').then((r) => r.body.subscriptions as { provider: string }[]);
    expect((await subscriptions()).find((m) => m.provider === 'openai')).toMatchObject({ provider: 'openai', label: 'team key', useForNewAgents: true });
    await screenshot(page, '36-model-subscriptions');
    await audit('model subscriptions page');
    await remove('openai', 'Disconnect');
    expect((await subscriptions()).map((m) => m.provider)).not.toContain('openai');
  });

  it('channels: a loopback connection claimed through its connect link, a binding, a channel webhook, an app registered with the platform, all deleted', async () => {
    await open('Channels', 'Channel connections');
    await page.getByRole('button', { name: 'New connection' }).click();
    await page.getByLabel('Label').fill('web loop');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await noAlert();
    const r = row('web loop');
    await expectContains(r, 'pending');
    // The connect flow: the end user opens the link and claims it; the list shows it connected.
    const link = await r.getByRole('link', { name: 'Open the connect link' }).getAttribute('href');
    const claim = await desk.context.newPage();
    await claim.goto(link!);
    await claim.getByRole('button', { name: 'Connect' }).click();
    await claim.waitForLoadState();
    await claim.close();
    await page.bringToFront();
    await page.evaluate(() => window.dispatchEvent(new Event('focus')));
    await expectContains(row('web loop'), 'connected');
    await screenshot(page, '37-channel-connections');
    await audit('channel connections page');

    const session = await s.api('POST', '/sessions', { body: { agent: agentId, title: 'Channel target' } });
    expect(session.status).toBe(201);
    await page.getByRole('link', { name: 'Bindings' }).click();
    await page.getByRole('heading', { level: 1, name: 'Channel bindings' }).waitFor();
    await page.getByRole('button', { name: 'New binding' }).click();
    await page.getByLabel('Connection').selectOption({ label: 'web loop' });
    await page.getByLabel('Thread id').fill('thread-42');
    await page.getByLabel('Session id').fill(session.body.session.id);
    await page.getByRole('button', { name: 'Create binding' }).click();
    await noAlert();
    await expectContains(row('thread-42'), session.body.session.id);
    await screenshot(page, '38-channel-bindings');
    await audit('channel bindings page');
    await remove('thread-42');

    await page.locator('nav[aria-label="Channels"]').getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Channel webhooks' }).waitFor();
    await page.getByRole('button', { name: 'New channel webhook' }).click();
    await page.getByLabel('URL').fill(`${receiverUrl}/channel-events`);
    await page.getByRole('checkbox', { name: 'message_received' }).check();
    await page.getByRole('button', { name: 'Create channel webhook' }).click();
    await noAlert();
    await expectText(page.getByTestId('secret-value'), /^whsec_/);
    await page.getByRole('button', { name: 'Done' }).click();
    await expectContains(row(`${receiverUrl}/channel-events`), 'message_received');
    await row(`${receiverUrl}/channel-events`).getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('combobox', { name: 'Status' }).selectOption('disabled');
    await page.getByRole('button', { name: 'Save' }).click();
    await expectContains(row(`${receiverUrl}/channel-events`), 'disabled');
    expect(((await s.api('GET', '/channels/webhooks')).body.data as { status: string }[]).map((w) => w.status)).toEqual(['disabled']);
    await screenshot(page, '38a-channel-webhooks');
    await audit('channel webhooks page');
    await remove(`${receiverUrl}/channel-events`);
    expect((await s.api('GET', '/channels/webhooks')).body.data).toEqual([]);

    await page.getByRole('link', { name: 'Apps' }).click();
    await page.getByRole('heading', { level: 1, name: 'Channel apps' }).waitFor();
    await page.getByRole('button', { name: 'New app' }).click();
    await page.getByLabel('Platform').selectOption('telegram');
    await page.getByLabel('Label').fill('web bot');
    await page.getByLabel('Credentials').fill(`bot_token=${BOT_TOKEN}`);
    await page.getByRole('button', { name: 'Create app' }).click();
    await noAlert();
    await expectContains(row('web bot'), 'bot_token');
    expect(await page.content()).not.toContain(BOT_TOKEN);
    await screenshot(page, '39-channel-apps');
    await audit('channel apps page');
    await remove('web bot');
    expect((await s.api('GET', '/channels/apps')).body.data).toEqual([]);

    await page.getByRole('link', { name: 'Connections' }).click();
    await remove('web loop');
    expect(((await s.api('GET', '/channels/connections')).body.data as { label: string }[]).map((c) => c.label)).not.toContain('web loop');
  });

  it('at phone width every management page fits the screen (rows as cards, the sections a menu)', async () => {
    expect(
      (await s.api('POST', '/environments', { body: { name: 'phone-env', packages: { apt: ['git'] }, network: { allowed_hosts: ['pypi.org'] } } })).status,
    ).toBe(201);
    expect(
      (
        await s.api('POST', '/webhooks', {
          body: { url: 'https://example.com/a-rather-long/path/for/a/phone/screen', events: ['agent.created', 'session.status_idle'] },
        })
      ).status,
    ).toBe(201);
    expect((await s.api('POST', '/vaults', { body: { name: 'phone-vault' } })).status).toBe(201);
    const phone = await offlineContext(browser, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const p = await phone.context.newPage();
    await signIn(p, s);
    for (const [hash, heading] of [
      ['environments', 'Environments'],
      ['vaults', 'Vaults'],
      ['routines', 'Routines'],
      ['webhooks', 'Webhooks'],
      ['files', 'Files'],
      ['skills', 'Skills'],
      ['subscriptions', 'Model subscriptions'],
      ['channels', 'Channel connections'],
    ] as const) {
      await p.goto(`${s.url}/#/${hash}`);
      await p.getByRole('heading', { level: 1, name: heading }).waitFor();
      await expectCount(p.getByRole('status').filter({ hasText: 'Loading' }), 0);
      const wide = await p.evaluate(() =>
        [document.documentElement, ...document.querySelectorAll('nav, .table-wrap, td')]
          .filter((el) => el.scrollWidth > el.clientWidth + 1 || el.getBoundingClientRect().right > window.innerWidth + 1)
          .map((el) => el.tagName + '.' + el.className),
      );
      expect(wide, `${hash}: wider than the screen`).toEqual([]);
      await screenshot(p, `40-phone-${hash}`);
    }
    await phone.context.close();
    expect(phone.external).toEqual([]);
  });

  it('no page asked for anything beyond loopback', () => {
    expect(desk.external).toEqual([]);
  });
});
