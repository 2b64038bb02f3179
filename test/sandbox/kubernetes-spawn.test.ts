// Streaming processes in a sandbox pod (what CLI engine turns run on with SANDBOX_DRIVER=kubernetes),
// against the fake API server whose pods are real jailed processes: stdout lines arrive while the
// process runs, stdin, the exit code, stderr's end kept; SIGTERM and SIGKILL reach the whole tree;
// a host directory (the engine cache) that the pod's image lacks is copied into the pod once and
// the process is given its path there; one the image has, with its install marker, is used as
// it is (no copy).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driverOnFakeCluster, type DriverOnFakeCluster } from '../helpers/fake-cluster.js';
import { POD_COPIES_DIR } from '../../src/sandbox/kubernetes/pod-mounts.js';
import { DONE_MARKER } from '../../src/engines/cli/core/install.js';
import type { Sandbox, SandboxProcess } from '../../src/sandbox/driver.js';

const NS = 'sandboxes-spawn-test';

async function drain(p: SandboxProcess): Promise<string[]> {
  const out: string[] = [];
  for await (const l of p.lines) out.push(l);
  return out;
}

/** A directory with bin/tool, which prints where it ran from; `marker` makes it a finished install. */
function toolDir(dir: string, marker: boolean): string {
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'bin/tool'), '#!/bin/sh\necho "tool ran from $(dirname "$0")"\n', { mode: 0o755 });
  if (marker) fs.writeFileSync(path.join(dir, DONE_MARKER), 'installed\n');
  return dir;
}

describe('kubernetes driver: streaming processes', () => {
  let cluster: DriverOnFakeCluster;
  let sb: Sandbox;
  const hostDir = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-mount-'));
  // What the sandbox image has under /opt/engines: one finished install, one without its marker.
  const imageEngines = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-image-engines-'));

  beforeAll(async () => {
    toolDir(path.join(imageEngines, 'tool@2.0.0'), true);
    toolDir(path.join(imageEngines, 'tool@3.0.0'), false);
    fs.chmodSync(imageEngines, 0o755);
    cluster = await driverOnFakeCluster({ namespace: NS, instanceId: 'api-spawn', image: { '/opt/engines': imageEngines } });
    sb = await cluster.driver.provision({ sessionId: 'sess_spawn' });
    toolDir(hostDir, true);
  }, 60_000);

  afterAll(async () => {
    await cluster?.driver.destroy('sess_spawn').catch(() => undefined);
    await cluster?.close();
    fs.rmSync(hostDir, { recursive: true, force: true });
    fs.rmSync(imageEngines, { recursive: true, force: true });
  });

  it("stdout lines arrive while the process runs; stdin, exit code, the session variables, stderr's end", async () => {
    const p = await sb.spawn!({
      command: 'echo first; read x; echo "got $x in $(pwd) as $AGENT_SERVICE_TOKEN $EXTRA"; sleep 0.5; echo oops >&2; exit 4',
      stdin: 'input\n',
      env: { EXTRA: 'extra' },
    });
    const it = p.lines[Symbol.asyncIterator]();
    expect((await it.next()).value).toBe('first');
    let exitedYet = false;
    void p.exited.then(() => (exitedYet = true));
    expect((await it.next()).value).toBe('got input in /workspace as tok-sess_spawn extra');
    expect(exitedYet).toBe(false); // the line came while the process was still running
    expect((await it.next()).done).toBe(true);
    expect(await p.exited).toBe(4);
    expect(p.stderrTail()).toContain('oops');
  });

  it('a host directory the image lacks (or has without its install marker) is copied into the pod once; argv and env get its path there', async () => {
    const inside = '/opt/engines/tool@1.0.0';
    const run = async () => {
      const p = await sb.spawn!({ argv: [`${inside}/bin/tool`], mounts: [{ host: hostDir, inside, marker: DONE_MARKER }] });
      return { lines: await drain(p), code: await p.exited };
    };
    expect(await run()).toEqual({ lines: [`tool ran from ${POD_COPIES_DIR}${inside}/bin`], code: 0 });
    const env = await sb.spawn!({ command: 'echo "$TOOL"', env: { TOOL: `${inside}/bin/tool` }, mounts: [{ host: hostDir, inside, marker: DONE_MARKER }] });
    expect(await drain(env)).toEqual([`${POD_COPIES_DIR}${inside}/bin/tool`]);
    // The image's tool@3.0.0 is no finished install: a copy of the host's is used instead.
    const half = await sb.spawn!({
      argv: ['/opt/engines/tool@3.0.0/bin/tool'],
      mounts: [{ host: hostDir, inside: '/opt/engines/tool@3.0.0', marker: DONE_MARKER }],
    });
    expect(await drain(half)).toEqual([`tool ran from ${POD_COPIES_DIR}/opt/engines/tool@3.0.0/bin`]);
    expect((await sb.exec(`ls ${POD_COPIES_DIR}/opt/engines`)).stdout.trim().split('\n')).toEqual(['tool@1.0.0', 'tool@3.0.0']);
  });

  it('a directory the image has at that path with its install marker is used as it is: nothing copied', async () => {
    const inside = '/opt/engines/tool@2.0.0';
    const execs = () => cluster.fake.requests.get('EXEC pod') ?? 0;
    const before = execs();
    const p = await sb.spawn!({ argv: [`${inside}/bin/tool`], env: { TOOL: `${inside}/bin/tool` }, mounts: [{ host: hostDir, inside, marker: DONE_MARKER }] });
    expect(await drain(p)).toEqual([`tool ran from ${inside}/bin`]);
    expect(execs() - before).toBe(2); // one probe and the process: no copy
    expect((await sb.exec(`test -e ${POD_COPIES_DIR}${inside} && echo copied || echo not-copied`)).stdout.trim()).toBe('not-copied');
  });

  it('SIGTERM ends the whole tree; SIGKILL ends a process that ignores SIGTERM', async () => {
    const term = await sb.spawn!({ command: 'echo up; sleep 100.7 & sleep 100.7; wait' });
    const lines = term.lines[Symbol.asyncIterator]();
    expect((await lines.next()).value).toBe('up');
    term.kill('SIGTERM');
    // The exec ends only once every holder of its stdout is gone: the background sleep included.
    await term.exited;
    expect((await sb.exec('ps -eo args | grep -c "^sleep 100.7"')).stdout.trim()).toBe('0');

    const stubborn = await sb.spawn!({ command: "trap '' TERM; echo up; sleep 100.8 & sleep 100.8; wait" });
    expect((await stubborn.lines[Symbol.asyncIterator]().next()).value).toBe('up');
    stubborn.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    stubborn.kill('SIGKILL');
    expect(await stubborn.exited).toBeNull();
    expect((await sb.exec('ps -eo args | grep -c "^sleep 100.8"')).stdout.trim()).toBe('0');
  });
});
