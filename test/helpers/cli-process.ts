// A CliSpawner running the CLI as a plain child process of the test (the sandbox's spawner runs
// it in the jail): files written first, stdin written and closed, stdout read line by line.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { CliSpawner } from '../../src/engines/cli/core/run-cli.js';

export function localSpawner(opts: { cwd: string; env: Record<string, string>; stderr?: string[] }): CliSpawner {
  return async (inv) => {
    for (const [file, content] of Object.entries(inv.files)) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, content);
    }
    const child = spawn(inv.argv[0]!, inv.argv.slice(1), { cwd: opts.cwd, env: { ...opts.env, ...inv.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.end(inv.stdin);
    child.stderr.on('data', (d: Buffer) => opts.stderr?.push(d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return { lines: readline.createInterface({ input: child.stdout }), exited, kill: (sig) => void child.kill(sig) };
  };
}
