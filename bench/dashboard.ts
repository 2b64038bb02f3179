// The dashboard's first load on loopback (target < 1 s): a signed-in user opens the agents page in
// a fresh Chromium context (nothing cached) until the agents list is on screen, five times,
// alternating with the machine's limit for the same browser work: the same fresh context
// loading a bare node:http page that puts one link on screen. Also the bundle's size (target
// < 500 KB gzipped). Skipped without /usr/bin/chromium.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import type { TestServer } from '../test/helpers/server.js';
import { CHROMIUM_MISSING, chromiumInstalled, launch, offlineContext, signIn } from '../test/helpers/browser.js';
import { buildWeb, WEB_DIST } from '../scripts/build-web.mjs';

const LOADS = 5;
const ms = (xs: number[]) => xs.map((x) => Math.round(x)).join(', ');

export async function dashboardBench(s: TestServer): Promise<[string, string][]> {
  if (!chromiumInstalled) return [['dashboard first load', CHROMIUM_MISSING]];
  await buildWeb({ ifStale: true });
  const agentName = `Bench dashboard ${Date.now()}`;
  await s.api('POST', '/agents', { body: { displayName: agentName, prompt: 'p' } });
  const limit = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>limit</title><a href="#">The agent</a>');
  });
  await new Promise<void>((r) => limit.listen(0, '127.0.0.1', r));
  const limitUrl = `http://127.0.0.1:${(limit.address() as AddressInfo).port}/`;
  const browser = await launch();
  try {
    // Signed in once through the real sign-in page; each measured load reuses only the cookie.
    const desk = await offlineContext(browser);
    await signIn(await desk.context.newPage(), s);
    const cookie = (await desk.context.cookies(s.url)).find((c) => c.name === 'as_session')!;
    await desk.context.close();

    const ours: number[] = [];
    const floor: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      const cold = await offlineContext(browser, { viewport: { width: 1280, height: 900 } });
      await cold.context.addCookies([cookie]);
      const p = await cold.context.newPage();
      await p.goto(`${s.url}/#/agents`);
      await p.getByRole('link', { name: agentName }).waitFor();
      ours.push(await p.evaluate(() => performance.now())); // from the navigation's start
      await cold.context.close();

      const bare = await offlineContext(browser, { viewport: { width: 1280, height: 900 } });
      const q = await bare.context.newPage();
      await q.goto(limitUrl);
      await q.getByRole('link', { name: 'The agent' }).waitFor();
      floor.push(await q.evaluate(() => performance.now()));
      await bare.context.close();
    }
    const js = fs.readFileSync(path.join(WEB_DIST, 'app/main.js'));
    const css = fs.readFileSync(path.join(WEB_DIST, 'app/main.css'));
    const gz = gzipSync(js).length + gzipSync(css).length;
    return [
      [`dashboard first load (fresh context → agents list on screen), best / all of ${LOADS}`, `${Math.round(Math.min(...ours))} ms / ${ms(ours)} ms`],
      ['limit: the same fresh context → one link of a bare node:http page, best / all', `${Math.round(Math.min(...floor))} ms / ${ms(floor)} ms`],
      ['dashboard bundle (JS + CSS), gzipped', `${(js.length / 1024 + css.length / 1024).toFixed(0)} KB, ${(gz / 1024).toFixed(1)} KB gzipped`],
    ];
  } finally {
    await browser.close();
    limit.close();
  }
}
