// Chromium for the web tests: Debian's package driven by playwright-core (Playwright's own
// browser download does not work offline). Every page is held offline: a request to anything
// but loopback is refused and recorded, so a test can prove the pages need no CDN.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll } from 'vitest';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import type { Config } from '../../src/config.js';
import { buildWeb } from '../../scripts/build-web.mjs';
import { startFakeProvider, type FakeProvider } from '../fake-provider/server.js';
import { startTestServer, type TestServer } from './server.js';
import { onFakeProvider } from './sessions.js';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const chromiumInstalled = fs.existsSync(CHROMIUM);
export const CHROMIUM_MISSING = `browser tests skipped: ${CHROMIUM} is missing — install it with \`apt-get install -y chromium\``;

export const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/web');

const require = createRequire(import.meta.url);
const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface OfflineContext {
  context: BrowserContext;
  /** Requests to non-loopback hosts the pages tried (all refused). */
  external: string[];
}

export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--disable-gpu', '--disable-dev-shm-usage'] });
}

export async function offlineContext(browser: Browser, opts: BrowserContextOptions = {}): Promise<OfflineContext> {
  const context = await browser.newContext(opts);
  const external: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || url.protocol === 'blob:' || ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) return route.continue();
    external.push(url.href);
    return route.abort('internetdisconnected');
  });
  return { context, external };
}

/** Signs in through the real sign-in page as the server's owner; ends on the agents page. */
export async function signIn(p: Page, s: { url: string; adminEmail: string; adminPassword: string }): Promise<void> {
  await p.goto(`${s.url}/`);
  await p.waitForURL(/\/auth\/login\?next=/);
  await p.getByLabel('Email').fill(s.adminEmail);
  await p.getByLabel('Password').fill(s.adminPassword);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
}

export interface WebDesk {
  s: TestServer;
  browser: Browser;
  /** The 1280×900 offline context the page is in. */
  desk: OfflineContext;
  page: Page;
}

export interface WebDeskOptions {
  /** Config for the server, read when it starts (after the fake provider's, which it overrides). */
  server?: () => Partial<Config>;
  /** Set before the fake provider and the server start. */
  env?: Record<string, string>;
  /** Also send the server's OpenAI calls to the fake provider. */
  openai?: boolean;
  /** Runs once the server is up, before Chromium starts (e.g. to create what the pages show). */
  seed?: (s: TestServer) => Promise<void>;
  /** Sign the page in as the server's owner (default true). */
  signIn?: boolean;
}

/**
 * A browser test file's setup, as hooks of the enclosing describe: before all, the web is built
 * (when stale), `env` is set, a fake provider starts when `fakeProvider` (the server's model
 * calls go to it, see onFakeProvider), then a test server (then `seed`), Chromium, an offline
 * 1280×900 context and a page in it, signed in as the owner unless `signIn: false`; `use`
 * receives them. After all, the browser, the server and the provider are stopped, in that order.
 */
export function withWebDesk(use: (d: WebDesk) => void, opts?: WebDeskOptions & { fakeProvider?: false }): void;
export function withWebDesk(use: (d: WebDesk & { fake: FakeProvider }) => void, opts: WebDeskOptions & { fakeProvider: true }): void;
export function withWebDesk(use: (d: WebDesk & { fake: FakeProvider }) => void, opts: WebDeskOptions & { fakeProvider?: boolean } = {}): void {
  let s: TestServer | undefined;
  let fake: FakeProvider | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    await buildWeb({ ifStale: true });
    Object.assign(process.env, opts.env);
    if (opts.fakeProvider) fake = await startFakeProvider();
    s = await startTestServer({ ...(fake ? onFakeProvider(fake, opts) : {}), ...opts.server?.() });
    await opts.seed?.(s);
    browser = await launch();
    const desk = await offlineContext(browser, { viewport: { width: 1280, height: 900 } });
    // Playwright's own waits give up before the test's timeout, so a failure names its locator.
    desk.context.setDefaultTimeout(15_000);
    const page = await desk.context.newPage();
    if (opts.signIn !== false) await signIn(page, s);
    use({ s, fake: fake as FakeProvider, browser, desk, page }); // fake: undefined without `fakeProvider` (typed so by the overloads)
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await s?.stop();
    await fake?.close();
  });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** axe-core run in the page (evaluated through the debugging protocol, so the page's CSP stays on). */
export async function seriousViolations(page: Page, opts: { exclude?: string[] } = {}): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => typeof (globalThis as { axe?: unknown }).axe !== 'undefined'))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async (exclude) => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(ctx: unknown, opts: unknown): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run(
      { exclude: exclude.map((s) => [s]) },
      { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } },
    );
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => JSON.stringify(n.target)) }));
  }, opts.exclude ?? []);
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

// Waiting assertions on locators (vitest's expect does not wait; these poll until true or time out).
type Locatorish = { allInnerTexts(): Promise<string[]>; count(): Promise<number> };

async function poll(what: () => string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Some matching element's whole text equals `expected` (or matches it). */
export async function expectText(loc: Locatorish, expected: string | RegExp, timeoutMs = 10_000): Promise<void> {
  let seen: string[] = [];
  await poll(
    () => `text ${expected} (saw ${JSON.stringify(seen)})`,
    async () => {
      seen = (await loc.allInnerTexts()).map(norm);
      return seen.some((t) => (typeof expected === 'string' ? t === expected : expected.test(t)));
    },
    timeoutMs,
  );
}

/** Some matching element's text contains `part`. */
export async function expectContains(loc: Locatorish, part: string, timeoutMs = 10_000): Promise<void> {
  let seen: string[] = [];
  await poll(
    () => `text containing ${JSON.stringify(part)} (saw ${JSON.stringify(seen).slice(0, 500)})`,
    async () => {
      seen = (await loc.allInnerTexts()).map(norm);
      return seen.some((t) => t.includes(part));
    },
    timeoutMs,
  );
}

export async function expectCount(loc: Locatorish, n: number, timeoutMs = 10_000): Promise<void> {
  let seen = -1;
  await poll(
    () => `${n} elements (saw ${seen})`,
    async () => (seen = await loc.count()) === n,
    timeoutMs,
  );
}
