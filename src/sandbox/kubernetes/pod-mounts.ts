// Host directories a pod's process needs read-only (the engine install cache): a pod cannot bind
// a directory of the API's host, so the directory is used where the image already has it (the
// sandbox image can carry the current engines at /opt/engines), else copied once per pod into
// its /tmp volume by a tar stream over exec, and the process is given that path instead.
import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import type { PodExecRequest, PodExecResult } from './pod-exec.js';

/** Where copies land inside a pod (/tmp is a writable volume; the root filesystem is read-only). */
export const POD_COPIES_DIR = '/tmp/agent-mounts';

// $1 the path the process expects, $2 where a copy goes: prints the path to use, exit 1 if neither exists.
const PROBE = `if [ -d "$1" ]; then printf '%s' "$1"; elif [ -e "$2/.agent-service-copied" ]; then printf '%s' "$2"; else exit 1; fi`;
// $1 where the copy goes: untar stdin beside it, then move it into place (a concurrent copy may win).
const COPY = `at=$1; t="$at.tmp.$$"; rm -rf "$t"; mkdir -p "$t" && tar -x -C "$t" --no-same-owner && touch "$t/.agent-service-copied" && mkdir -p "$(dirname "$at")" && { mv -T "$t" "$at" 2>/dev/null || rm -rf "$t"; } && [ -e "$at/.agent-service-copied" ]`;

type Exec = (req: Omit<PodExecRequest, 'namespace'>) => Promise<PodExecResult>;

/** The pod path of each mount (`inside` → where it is in this pod), copying what is missing. */
export async function placeMounts(exec: Exec, pod: string, mounts: { host: string; inside: string }[]): Promise<Map<string, string>> {
  const placed = new Map<string, string>();
  for (const m of mounts) {
    const copy = `${POD_COPIES_DIR}${m.inside}`;
    const probe = await exec({ pod, argv: ['/bin/sh', '-c', PROBE, 'probe', m.inside, copy], timeoutMs: 30_000 });
    if (probe.exitCode === 0) {
      placed.set(m.inside, probe.stdout.text());
      continue;
    }
    const tar = spawn('tar', ['-c', '-C', m.host, '.'], { stdio: ['ignore', 'pipe', 'ignore'] }).stdout.pipe(new PassThrough());
    const r = await exec({ pod, argv: ['/bin/sh', '-c', COPY, 'copy', copy], stdin: tar, timeoutMs: 600_000 });
    if (r.exitCode !== 0) throw new Error(`copying ${m.inside} into sandbox pod ${pod} failed: ${r.stderr.text().trim() || `exit ${r.exitCode}`}`);
    placed.set(m.inside, copy);
  }
  return placed;
}

/** `text` with each mount's expected path replaced by where it is in the pod. */
export function rewriteMounts(text: string, placed: Map<string, string>): string {
  let out = text;
  for (const [inside, at] of placed) if (inside !== at) out = out.replaceAll(inside, at);
  return out;
}
