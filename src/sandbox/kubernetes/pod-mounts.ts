// Host directories a pod's process needs read-only (the engine install cache): a pod cannot bind
// a directory of the API's host, so the directory is used where the image already has it (the
// sandbox image carries the catalog's engines at /opt/engines, each with its install marker),
// else copied once per pod into its /tmp volume by a tar stream over exec, and the process is
// given that path instead. One exec probes every mount; only what is missing is copied.
import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import type { SandboxMount } from '../driver.js';
import type { PodExecRequest, PodExecResult } from './pod-exec.js';

/** Where copies land inside a pod (/tmp is a writable volume; the root filesystem is read-only). */
export const POD_COPIES_DIR = '/tmp/agent-mounts';
const COPIED = '.agent-service-copied';

// Triples of (expected path, copy path, marker): one line per mount with the path to use — the
// expected one when the image has it with its marker, else an earlier copy — or "-" for neither.
const PROBE = `while [ $# -ge 3 ]; do
  if [ -n "$3" ] && [ -e "$1/$3" ]; then echo "$1"; elif [ -e "$2/${COPIED}" ]; then echo "$2"; else echo -; fi
  shift 3
done`;
// $1 where the copy goes: untar stdin beside it, then move it into place (a concurrent copy may win).
const COPY = `at=$1; t="$at.tmp.$$"; rm -rf "$t"; mkdir -p "$t" && tar -x -C "$t" --no-same-owner && touch "$t/${COPIED}" && mkdir -p "$(dirname "$at")" && { mv -T "$t" "$at" 2>/dev/null || rm -rf "$t"; } && [ -e "$at/${COPIED}" ]`;

type Exec = (req: Omit<PodExecRequest, 'namespace'>) => Promise<PodExecResult>;

/** The pod path of each mount (`inside` → where it is in this pod), copying what is missing. */
export async function placeMounts(exec: Exec, pod: string, mounts: SandboxMount[]): Promise<Map<string, string>> {
  const placed = new Map<string, string>();
  if (!mounts.length) return placed;
  const copyOf = (m: SandboxMount) => `${POD_COPIES_DIR}${m.inside}`;
  const probe = await exec({
    pod,
    argv: ['/bin/sh', '-c', PROBE, 'probe', ...mounts.flatMap((m) => [m.inside, copyOf(m), m.marker ?? ''])],
    timeoutMs: 30_000,
  });
  if (probe.exitCode !== 0)
    throw new Error(
      `looking for ${mounts.map((m) => m.inside).join(', ')} in sandbox pod ${pod} failed: ${probe.stderr.text().trim() || `exit ${probe.exitCode}`}`,
    );
  const found = probe.stdout.text().split('\n');
  for (const [i, m] of mounts.entries()) {
    const at = found[i];
    if (at && at !== '-') {
      placed.set(m.inside, at);
      continue;
    }
    const tar = spawn('tar', ['-c', '-C', m.host, '.'], { stdio: ['ignore', 'pipe', 'ignore'] }).stdout.pipe(new PassThrough());
    const r = await exec({ pod, argv: ['/bin/sh', '-c', COPY, 'copy', copyOf(m)], stdin: tar, timeoutMs: 600_000 });
    if (r.exitCode !== 0) throw new Error(`copying ${m.inside} into sandbox pod ${pod} failed: ${r.stderr.text().trim() || `exit ${r.exitCode}`}`);
    placed.set(m.inside, copyOf(m));
  }
  return placed;
}

/** `text` with each mount's expected path replaced by where it is in the pod. */
export function rewriteMounts(text: string, placed: Map<string, string>): string {
  let out = text;
  for (const [inside, at] of placed) if (inside !== at) out = out.replaceAll(inside, at);
  return out;
}
