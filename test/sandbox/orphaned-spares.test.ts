// A spare sandbox (src/runtime/warm-sandboxes.ts) is nobody's session: a process killed with -9
// would leave its spares on disk for good. The next process started on the same DATA_DIR and
// host removes them (src/runtime/spare-ledger.ts); the spares of a process that still runs, and
// those of another host's process, stay.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/sessions.js';
import { sandboxDriver } from '../../src/sandbox/current-driver.js';
import { spareLedger } from '../../src/runtime/spare-ledger.js';
import { newId } from '../../src/ids.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'orphaned-spares-'));
const alive = spawn('sleep', ['120'], { stdio: 'ignore' });
let server: TestServer | undefined;

afterAll(async () => {
  alive.kill('SIGKILL');
  await server?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it("at start, the spares of a stopped process of this host are removed; a running one's and another host's stay", async () => {
  const stopped = spawnSync('true').pid; // a process id that no longer runs
  const [ofStopped, ofRunning, ofOtherHost] = [newId('sess'), newId('sess'), newId('sess')];

  // The earlier processes' spares, made by a server on the same data directory.
  const before = await startTestServer({ dataDir });
  for (const id of [ofStopped, ofRunning, ofOtherHost]) await (await sandboxDriver().provision({ sessionId: id })).writeFile('/workspace/warm.txt', 'warm');
  await before.stop();
  spareLedger(dataDir, os.hostname(), stopped).add(ofStopped);
  spareLedger(dataDir, os.hostname(), alive.pid!).add(ofRunning);
  spareLedger(dataDir, 'another-host', stopped).add(ofOtherHost);

  server = await startTestServer({ dataDir });
  await waitFor(async () => !fs.existsSync(path.join(dataDir, 'spares', `${os.hostname()}-${stopped}`)), 10_000, "the stopped process's spare to be removed");
  expect(fs.existsSync(path.join(dataDir, 'sandboxes', ofStopped))).toBe(false);
  expect(await sandboxDriver().get(ofStopped)).toBeNull();
  for (const id of [ofRunning, ofOtherHost]) expect(await (await sandboxDriver().get(id))?.readFile('/workspace/warm.txt')).toEqual(Buffer.from('warm'));
  expect(fs.readdirSync(path.join(dataDir, 'spares', `${os.hostname()}-${alive.pid}`))).toEqual([ofRunning]);
  expect(spareLedger(dataDir).orphans()).toEqual([]);
});
