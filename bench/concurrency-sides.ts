// The sides the many-sessions bench (bench/concurrency.ts) measures, each as processes of its
// own beside the bench's client: the service (src/main.ts, one process or several on one
// PostgreSQL + Redis) and its limit (bench/concurrency-limit.ts). Every process runs with
// bench/statement-counter.ts preloaded, so statements per turn and memory are read the same
// way on both sides; CPU time comes from /proc.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startChildServer, type ChildServer } from '../test/helpers/child-server.js';
import type { FakeProvider } from '../test/fake-provider/server.js';
import { call } from './concurrency-client.js';

const COUNTER = path.join(import.meta.dirname, 'statement-counter.ts');

export interface Proc {
  base: string;
  pid: number;
  output: () => string;
  /** Where the preloaded counter writes its snapshot on SIGUSR2. */
  countsFile: string;
  kill: () => Promise<void>;
}

export interface Side {
  label: string;
  /** Session i is created and sent to on procs[i % n], and its stream opened on procs[(i + 1) % n]. */
  procs: Proc[];
  token: string;
  agentId: string;
  close(): Promise<void>;
}

export interface Snapshot {
  seq: number;
  rss: number;
  heapUsed: number;
  statements: Record<string, number>;
  /** With BENCH_STATEMENTS=where: counts per statement text, named by its first caller's frames. */
  texts?: Record<string, number>;
}

const dbUrl = (db: string, schema: string) => `${db}${db.includes('?') ? '&' : '?'}schema=${schema}`;

async function dropSchema(db: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

const asProc = (c: ChildServer, countsFile: string): Proc => ({
  base: c.base,
  pid: c.process.pid!,
  output: c.output,
  countsFile,
  kill: () => c.kill('SIGINT'),
});

/**
 * `processes` service processes on one database (TEST_DATABASE_URL's fresh schema, or PGlite when
 * unset: one process only) and Redis (TEST_REDIS_URL), one queue prefix of their own.
 * `profile`: BENCH_CPU_PROF and BENCH_NODE_ARGS apply (the single-process side's).
 */
export async function startService(fake: FakeProvider, processes: number, profile: boolean): Promise<Side> {
  const token = `ast_bench_${randomBytes(16).toString('hex')}`;
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const db = process.env.TEST_DATABASE_URL;
  const profDir = process.env.BENCH_CPU_PROF;
  const shared = {
    ADMIN_TOKEN: token,
    ADMIN_PASSWORD: 'bench password here',
    SECRET_KEY: randomBytes(32).toString('hex'), // one key for every process of the side
    ANTHROPIC_API_KEY: 'sk-ant-bench',
    ANTHROPIC_BASE_URL: fake.anthropicBaseUrl,
    RATE_LIMIT_PER_MINUTE: '1000000',
    LOG_LEVEL: 'warn',
    STARTING_CREDITS_CENTS: '100000000',
    QUEUE_PREFIX: schema,
    ...(process.env.DATABASE_POOL_SIZE ? { DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE } : {}),
    ...(db ? { DATABASE_URL: dbUrl(db, schema) } : {}),
    ...(process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : {}),
  };
  const procs: Proc[] = [];
  const dirs: string[] = [];
  try {
    // One after the other: the first one migrates the schema and creates the admin.
    for (let i = 0; i < processes; i++) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-conc-'));
      dirs.push(dataDir);
      const countsFile = path.join(dataDir, 'statements.json');
      const child = await startChildServer({ ...shared, DATA_DIR: dataDir, BENCH_STATEMENTS_FILE: countsFile }, [
        '--expose-gc',
        '--import',
        'tsx',
        '--import',
        COUNTER,
        ...(profile && profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []),
        ...(profile && process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []),
      ]);
      procs.push(asProc(child, countsFile));
    }
    const agentId = (await call(procs[0]!.base, token, 'POST', '/agents', { displayName: 'bench' })).body.agent.id as string;
    return {
      label: processes === 1 ? 'service' : `service × ${processes}`,
      procs,
      token,
      agentId,
      close: async () => {
        await Promise.all(procs.map((p) => p.kill()));
        if (db) await dropSchema(db, schema);
        for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await Promise.all(procs.map((p) => p.kill()));
    if (db) await dropSchema(db, schema);
    throw err;
  }
}

/** The limit server (bench/concurrency-limit.ts) on TEST_DATABASE_URL, in a fresh schema. */
export async function startLimit(fake: FakeProvider, db: string): Promise<Side> {
  const schema = `bench_limit_${randomBytes(4).toString('hex')}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-limit-'));
  const countsFile = path.join(dataDir, 'statements.json');
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', '--import', COUNTER, path.join(import.meta.dirname, 'concurrency-limit.ts')], {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: { ...process.env, DATABASE_URL: db, LIMIT_SCHEMA: schema, ANTHROPIC_BASE_URL: fake.anthropicBaseUrl, BENCH_STATEMENTS_FILE: countsFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const base = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /REST (http:\/\/\S+\/v1)/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the limit server exited (${code}):\n${out}`)));
  }).catch(async (err: unknown) => {
    await dropSchema(db, schema);
    throw err;
  });
  const kill = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGINT');
    });
  return {
    label: 'limit',
    procs: [{ base, pid: child.pid!, output: () => out, countsFile, kill }],
    token: 'ignored',
    agentId: 'ignored',
    close: async () => {
      await kill();
      await dropSchema(db, schema);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Statement counts and memory (after a full GC when `gc`) of every process of the side, summed. */
export async function snapshot(side: Side, gc: boolean): Promise<Snapshot> {
  const one = async (p: Proc): Promise<Snapshot> => {
    const before = fs.existsSync(p.countsFile) ? (JSON.parse(fs.readFileSync(p.countsFile, 'utf8')) as Snapshot).seq : 0;
    if (gc) fs.writeFileSync(`${p.countsFile}.gc`, '');
    process.kill(p.pid, 'SIGUSR2');
    for (let i = 0; i < 500; i++) {
      await new Promise((r) => setTimeout(r, 10));
      if (!fs.existsSync(p.countsFile)) continue;
      const s = JSON.parse(fs.readFileSync(p.countsFile, 'utf8')) as Snapshot;
      if (s.seq > before) return s;
    }
    throw new Error(`${p.base} wrote no statement counts`);
  };
  const all = await Promise.all(side.procs.map(one));
  const statements: Record<string, number> = {};
  const texts: Record<string, number> = {};
  for (const s of all) {
    for (const [kind, n] of Object.entries(s.statements)) statements[kind] = (statements[kind] ?? 0) + n;
    for (const [text, n] of Object.entries(s.texts ?? {})) texts[text] = (texts[text] ?? 0) + n;
  }
  return {
    seq: 0,
    rss: all.reduce((a, s) => a + s.rss, 0),
    heapUsed: all.reduce((a, s) => a + s.heapUsed, 0),
    statements,
    ...(Object.keys(texts).length ? { texts } : {}),
  };
}

/** CPU time (user + system) of every process of the side, in ms. */
export function cpuOf(side: Side): number {
  let ms = 0;
  for (const p of side.procs) {
    const stat = fs.readFileSync(`/proc/${p.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    ms += (Number(stat[11]) + Number(stat[12])) * (1000 / 100); // utime + stime, clock ticks of 10 ms
  }
  return ms;
}

/** Resident memory of every process of the side, in MB. */
export function rssOf(side: Side): number {
  let kb = 0;
  for (const p of side.procs) kb += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p.pid}/status`, 'utf8'))![1]);
  return kb / 1024;
}
