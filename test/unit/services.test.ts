// The one composition of the process's services (src/services): accessors throw a named error
// until their part is composed, return exactly the composed part after, and stop ends it (back
// to the standalone set every test file starts with, test/helpers/standalone-services.ts).
import fs from 'node:fs';
import net from 'node:net';
import { PortUnavailableError } from '../../src/http/port-check.js';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { config, loadConfig, type Config } from '../../src/config.js';
import { blobStore, fsBlobStore } from '../../src/blobs/blob-store.js';
import { egressCa } from '../../src/egress/ca.js';
import { pubsub, memoryPubSub } from '../../src/events/pubsub.js';
import { routineScheduler } from '../../src/routines/scheduling.js';
import { sandboxEgress } from '../../src/runtime/sandboxes.js';
import { sandboxDriver } from '../../src/sandbox/current-driver.js';
import { publicUrl } from '../../src/channels/public-url.js';
import { checkOutboundUrl } from '../../src/net/outbound-guard.js';
import { installServices, overrideServices, ServiceNotComposedError } from '../../src/services/registry.js';
import { composeServices } from '../../src/composition/compose.js';
import { startTestServer } from '../helpers/server.js';
import { startServer } from '../../src/server.js';
import { databaseReady, openDatabase, pgPool, prisma } from '../../src/db/client.js';
import { open, seal } from '../../src/crypto/secret-box.js';
import { ownerId, previousLivesPrefix } from '../../src/services/instance.js';
import { redis } from '../../src/redis.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'services-test-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const configFor = (dataDir: string): Config => ({ ...loadConfig({}), dataDir, port: 0, host: '127.0.0.1' });

describe('before composition', () => {
  it('every accessor of a fresh process throws "service not composed: <name>"', async () => {
    vi.resetModules(); // a module graph nothing was installed into (the setup file used the other one)
    const { seal: freshSeal } = await import('../../src/crypto/secret-box.js');
    const fresh = {
      config: (await import('../../src/config.js')).config,
      pubsub: (await import('../../src/events/pubsub.js')).pubsub,
      blobStore: (await import('../../src/blobs/blob-store.js')).blobStore,
      routineScheduler: (await import('../../src/routines/scheduling.js')).routineScheduler,
      sandboxDriver: (await import('../../src/sandbox/current-driver.js')).sandboxDriver,
      egressCa: (await import('../../src/egress/ca.js')).egressCa,
      database: (await import('../../src/db/client.js')).pgPool,
      redis: (await import('../../src/redis.js')).redis,
      instance: (await import('../../src/services/instance.js')).ownerId,
      secretKey: () => freshSeal('x'),
    };
    const { prisma: freshPrisma } = await import('../../src/db/client.js');
    for (const [name, read] of Object.entries(fresh)) expect(read, name).toThrow(`service not composed: ${name}`);
    // The Prisma client is the composed database's: none before composition.
    expect(() => freshPrisma.session).toThrow('service not composed: database');
    const { enqueueSessionRun } = await import('../../src/runtime/queue.js');
    await expect(enqueueSessionRun('sess_x')).rejects.toThrow('service not composed: localRunner');
    vi.resetModules();
  });

  it('the standalone set has only the parts with a default: no blob store, sandboxes or egress CA', () => {
    expect(config().dataDir).toBe(loadConfig().dataDir);
    expect(pubsub()).toBeDefined();
    expect(() => blobStore()).toThrow(ServiceNotComposedError);
    expect(() => blobStore()).toThrow('service not composed: blobStore');
    expect(() => sandboxDriver()).toThrow('service not composed: sandboxDriver');
    expect(() => egressCa()).toThrow('service not composed: egressCa');
  });
});

describe('installServices / overrideServices', () => {
  it('accessors return exactly the composed parts; end() puts back the composition it replaced', () => {
    const cfg = configFor(tempDir());
    const store = fsBlobStore(path.join(cfg.dataDir, 'blobs'));
    const bus = memoryPubSub();
    const standaloneConfig = config();
    const composition = installServices({ config: cfg, blobStore: store, pubsub: bus });
    expect(config()).toBe(cfg);
    expect(blobStore()).toBe(store);
    expect(pubsub()).toBe(bus);
    expect(() => routineScheduler()).toThrow('service not composed: routineScheduler'); // not in this set
    composition.end();
    composition.end(); // idempotent
    expect(composition.ended).toBe(true);
    expect(config()).toBe(standaloneConfig);
    expect(() => blobStore()).toThrow('service not composed: blobStore');
  });

  it('a composition ended while a later one is in force is skipped when the later one ends', () => {
    const standaloneConfig = config();
    const a = installServices({ config: configFor(tempDir()) });
    const bCfg = configFor(tempDir());
    const b = installServices({ config: bCfg });
    a.end();
    expect(config()).toBe(bCfg); // b stays in force
    b.end();
    expect(config()).toBe(standaloneConfig);
  });

  it('overrideServices replaces parts of the composition in force, which its end() removes', () => {
    const cfg = configFor(tempDir());
    const composition = installServices({ config: cfg });
    overrideServices({ config: { ...cfg, telegramApiBaseUrl: 'http://127.0.0.1:9' } });
    expect(config().telegramApiBaseUrl).toBe('http://127.0.0.1:9');
    composition.end();
    expect(config().telegramApiBaseUrl).not.toBe('http://127.0.0.1:9');
  });
});

describe('composeServices', () => {
  it('builds every part from the config, installs them, and stop() ends the composition', async () => {
    const cfg = configFor(tempDir());
    let listening: string | null = null;
    const resolver = vi.fn(async () => [{ address: '10.1.2.3', family: 4 }]);
    const database = await openDatabase({ pgliteDir: 'memory://' });
    const composed = await composeServices(cfg, { database, listenUrl: () => listening, replace: { resolver } });
    try {
      expect(config()).toBe(cfg);
      // The database, the secret key and the instance identity are parts like the others.
      expect(composed.services.database).toBe(database);
      expect(await prisma.$queryRaw<{ one: number }[]>`SELECT 1 AS one`).toEqual([{ one: 1 }]);
      expect(await prisma.agent.count()).toBe(0);
      expect(pgPool()).toBeUndefined(); // PGlite: no pg pool
      expect(open(seal('a secret'))).toBe('a secret');
      expect(composed.services.secretKey.toString('hex')).toBe(fs.readFileSync(path.join(cfg.dataDir, 'secret.key'), 'utf8'));
      expect(ownerId()).toMatch(/^proc-[0-9A-Z]{26}#[0-9A-Z]{26}$/); // port 0: a random identity
      expect(previousLivesPrefix()).toBeNull();
      expect(redis()).toBeNull(); // no REDIS_URL
      expect(composed.services.turnGate.draining).toBe(false); // a fresh gate: turns are taken
      expect(composed.services.config).toBe(cfg);
      expect(sandboxDriver()).toBe(composed.services.sandboxDriver);
      expect(sandboxDriver().name).toBe('local');
      expect(egressCa()).toBe(sandboxEgress().ca);
      expect(fs.existsSync(path.join(cfg.dataDir, 'egress-ca', 'public', 'ca.crt'))).toBe(true);
      expect(pubsub()).toBe(composed.services.pubsub);
      expect(routineScheduler()).toBe(composed.services.routineScheduler);
      // The blob store is DATA_DIR's.
      const blob = await blobStore().put(Readable.from([Buffer.from('hello')]));
      expect(fs.existsSync(path.join(cfg.dataDir, 'blobs', blob.key.slice(0, 2), blob.key))).toBe(true);
      // The listen address is read when asked (known once the server listens).
      expect(publicUrl()).toBe('http://127.0.0.1:0');
      listening = 'http://127.0.0.1:4321';
      expect(publicUrl()).toBe('http://127.0.0.1:4321');
      // A replaced part is the one in force: the outbound guard resolves through it.
      expect(await checkOutboundUrl('https://hooks.example.test/')).toMatch(/refused.*10\.1\.2\.3/);
      expect(resolver).toHaveBeenCalledWith('hooks.example.test');
    } finally {
      await composed.stop();
      await database.close();
    }
    expect(() => sandboxDriver()).toThrow('service not composed: sandboxDriver');
    expect(() => prisma.agent).toThrow('service not composed: database');
    expect(() => egressCa()).toThrow('service not composed: egressCa');
    expect(() => blobStore()).toThrow('service not composed: blobStore');
    expect(config()).not.toBe(cfg);
  }, 60_000);

  it('startServer composes the services and its stop ends them', async () => {
    const s = await startTestServer();
    try {
      expect(config().adminEmail).toBe(s.adminEmail);
      expect(sandboxDriver().name).toBe('local');
      expect(publicUrl()).toBe(s.url); // the listen address, not HOST:PORT (port 0)
      expect(blobStore()).toBeDefined();
    } finally {
      await s.stop();
    }
    expect(() => blobStore()).toThrow('service not composed: blobStore');
    expect(config().adminEmail).not.toBe(s.adminEmail);
  }, 120_000);

  it('a second server composition holds its own database; stopping it puts the first one back in force', async () => {
    const first = await startTestServer();
    try {
      expect((await first.api('POST', '/agents', { body: { displayName: 'In the first' } })).status).toBe(201);
      const firstAgents = await prisma.agent.count();
      expect(firstAgents).toBeGreaterThan(0);
      const second = await startTestServer();
      try {
        expect(await prisma.agent.count()).toBe(0); // the second's fresh database
      } finally {
        await second.stop();
      }
      expect(await prisma.agent.count()).toBe(firstAgents);
    } finally {
      await first.stop();
    }
  }, 120_000);

  it("stopping the first server while a second one is in force closes only the first one's database and connections", async () => {
    const first = await startTestServer();
    const second = await startTestServer();
    try {
      expect((await second.api('POST', '/agents', { body: { displayName: 'In the second' } })).status).toBe(201);
      await first.stop();
      // The second's database, pub/sub and HTTP still serve.
      expect(await prisma.agent.count()).toBe(1);
      expect((await second.api('GET', '/agents')).body.agents).toHaveLength(1);
      const events: string[] = [];
      const unsubscribe = await pubsub().subscribe('check', (m) => events.push(m));
      await pubsub().publish('check', 'still open');
      await new Promise((r) => setTimeout(r, 50));
      await unsubscribe();
      expect(events).toEqual(['still open']);
    } finally {
      await second.stop();
    }
  }, 120_000);

  it('a start that fails part-way (a bad ADMIN_TOKEN, found after composing) ends its composition and closes its database', async () => {
    const cfg = { ...configFor(tempDir()), adminEmail: 'failed-start@example.com', adminToken: 'not-an-ast-token' };
    await expect(startServer(cfg, { pgliteDir: 'memory://' })).rejects.toThrow('ADMIN_TOKEN must start with ast_');
    expect(() => blobStore()).toThrow('service not composed: blobStore');
    expect(config().adminEmail).not.toBe('failed-start@example.com');
    expect(() => pgPool()).toThrow('service not composed: database');
    await expect(databaseReady()).resolves.toBe(false);
    // The process can start again afterwards.
    const s = await startTestServer();
    await s.stop();
  }, 120_000);

  it('a taken port fails the start before it composes or opens anything', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const cfg = { ...configFor(tempDir()), port, adminEmail: 'port-taken@example.com' };
      const failed = startServer(cfg, { pgliteDir: 'memory://' });
      await expect(failed).rejects.toBeInstanceOf(PortUnavailableError);
      await expect(failed).rejects.toMatchObject({ code: 'EADDRINUSE', port });
      expect(() => pgPool()).toThrow('service not composed: database');
      expect(config().adminEmail).not.toBe('port-taken@example.com');
    } finally {
      taken.close();
    }
  }, 120_000);
});
