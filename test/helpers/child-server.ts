// Runs the service as a separate process (`src/main.ts`, as `npm start` does) for tests that
// need several processes or a crash. Resolves once it prints its URL.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface ChildServer {
  url: string;
  base: string;
  process: ChildProcess;
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const ROOT = path.resolve(import.meta.dirname, '../..');

/** `nodeArgs`: flags for node itself (e.g. `--cpu-prof`, which NODE_OPTIONS refuses). */
export function startChildServer(env: Record<string, string>, nodeArgs: string[] = []): Promise<ChildServer> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
    cwd: ROOT,
    env: { ...process.env, VITEST: '', LOG_LEVEL: 'warn', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child server did not start:\n${out}`)), 60_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /REST (http:\/\/[^\s]+)\/v1/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1]!,
          base: `${m[1]}/v1`,
          process: child,
          output: () => out,
          kill: (signal = 'SIGTERM') =>
            new Promise<void>((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done();
              child.once('exit', () => done());
              child.kill(signal);
            }),
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child server exited (${code}):\n${out}`));
    });
  });
}

export async function api(base: string, token: string, method: string, p: string, body?: unknown) {
  const res = await fetch(base + p, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
