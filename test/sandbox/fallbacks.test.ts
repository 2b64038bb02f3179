// The local driver where bubblewrap is missing: util-linux `unshare` still gives /workspace,
// no host files, no route to the host's loopback services and the egress bridge (both with
// socat and with the node forwarder); where no namespace is possible a plain process runs with
// /workspace paths working and one loud warning, its egress on a loopback port. vcpus and
// memoryMb become a cgroup where this process may create one.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEgress } from '../../src/sandbox/driver.js';
import { createLocalDriver, unshareAvailable } from '../../src/sandbox/local.js';
import { cgroupSupport } from '../../src/sandbox/cgroups.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-fallback-'));
const hostOnly = path.join(os.tmpdir(), `host-only-${process.pid}.txt`);

/** A stand-in for the service's egress: each session's socket or port answers with its session id. */
function fakeEgress(): SandboxEgress & { close(): void } {
  const servers: http.Server[] = [];
  const serve = (sessionId: string) => {
    const server = http.createServer((req, res) => res.end(`egress of ${sessionId}: ${req.method} ${req.url}`));
    servers.push(server);
    return server;
  };
  return {
    async serveSocket(sessionId, hostPath) {
      fs.mkdirSync(path.dirname(hostPath), { recursive: true });
      fs.rmSync(hostPath, { force: true });
      await new Promise<void>((r) => serve(sessionId).listen(hostPath, r));
    },
    async serveLoopback(sessionId) {
      const server = serve(sessionId);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return (server.address() as { port: number }).port;
    },
    async stop() {},
    env: (sessionId, endpoint, caDir) => ({ AGENT_SERVICE_EGRESS: endpoint, AGENT_SERVICE_TOKEN: `token-of-${sessionId}`, CA_DIR: caDir ?? '' }),
    caFiles: () => null,
    close: () => servers.forEach((s) => s.close()),
  };
}

const egress = fakeEgress();
beforeAll(() => fs.writeFileSync(hostOnly, 'host only'));
afterAll(() => {
  egress.close();
  fs.rmSync(hostOnly, { force: true });
  fs.rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!unshareAvailable())('without bubblewrap: util-linux unshare', () => {
  const warnings: string[] = [];
  const driver = createLocalDriver({ rootDir: root, bwrapPath: '/nonexistent/bwrap', egress, logger: { warn: (m) => warnings.push(m) } });

  it('sees /workspace, writes there, and nothing of the host', async () => {
    const box = await driver.provision({ sessionId: 'sess_unshare', env: { GREETING: 'hi' } });
    expect(warnings).toEqual([expect.stringMatching(/util-linux unshare/)]);
    const r = await box.exec(`pwd; echo $HOME $GREETING; echo made > /workspace/made.txt; cat ${hostOnly} 2>&1; ls /work /root 2>&1; hostname; echo $$`);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('/workspace');
    expect(lines[1]).toBe('/workspace hi');
    expect(r.stdout).toMatch(/No such file or directory/);
    expect(r.stdout).not.toContain('host only');
    expect(lines.at(-2)).toBe('sandbox');
    expect(Number(lines.at(-1))).toBeLessThan(10); // its own PID namespace
    expect((await box.readFile('/workspace/made.txt')).toString()).toBe('made\n');
    // Written by the service, read inside; /workspace paths in commands work as with bwrap.
    await box.writeFile('/workspace/sub/in.txt', 'from the service');
    expect((await box.exec('cat /workspace/sub/in.txt', { cwd: '/workspace/sub' })).stdout).toBe('from the service');
  });

  it('cannot write the system directories nor keep capabilities', async () => {
    const box = (await driver.get('sess_unshare'))!;
    const r = await box.exec('touch /usr/x 2>&1; touch /etc/x 2>&1; grep CapEff /proc/self/status; mount -t tmpfs none /tmp 2>&1 || echo refused');
    expect(r.stdout).toMatch(/Read-only file system/);
    expect(r.stdout).toMatch(/CapEff:\s+0+\n/);
    expect(r.stdout).toContain('refused');
  });

  it("has only its own loopback: the host's 127.0.0.1:5432 is unreachable", async () => {
    const box = (await driver.get('sess_unshare'))!;
    const r = await box.exec('(exec 3<>/dev/tcp/127.0.0.1/5432 && echo CONNECTED) 2>&1; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "', {
      timeoutMs: 5000,
    });
    expect(r.stdout).not.toContain('CONNECTED');
    expect(r.stdout.trim().split('\n').at(-1)).toBe('lo');
  });

  it.each(['socat', 'node'])('reaches the egress bridge on 127.0.0.1:3128 (%s forwarder)', async (kind) => {
    const saved = process.env.SANDBOX_FORWARDER;
    process.env.SANDBOX_FORWARDER = kind;
    try {
      const box = (await driver.get('sess_unshare'))!;
      const r = await box.exec('echo "$AGENT_SERVICE_EGRESS $AGENT_SERVICE_TOKEN"; curl -sS http://127.0.0.1:3128/through-the-bridge', { timeoutMs: 20_000 });
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe('http://127.0.0.1:3128 token-of-sess_unshare\negress of sess_unshare: GET /through-the-bridge');
    } finally {
      if (saved === undefined) delete process.env.SANDBOX_FORWARDER;
      else process.env.SANDBOX_FORWARDER = saved;
    }
  });

  it('destroy removes the workspace', async () => {
    await driver.destroy('sess_unshare');
    expect(fs.existsSync(path.join(root, 'sess_unshare'))).toBe(false);
  });
});

describe('no namespace at all: a plain process, loudly', () => {
  const warnings: string[] = [];
  const driver = createLocalDriver({
    rootDir: root,
    bwrapPath: '/nonexistent/bwrap',
    unsharePath: '/nonexistent/unshare',
    egress,
    logger: { warn: (m) => warnings.push(m) },
  });

  it('warns once and still lets commands name /workspace', async () => {
    const box = await driver.provision({ sessionId: 'sess_plain_ws' });
    await driver.provision({ sessionId: 'sess_plain_ws2' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/WITHOUT isolation/);
    await box.writeFile('/workspace/data/in.txt', 'plain data');
    const r = await box.exec('cat /workspace/data/in.txt; echo; cd /workspace/data && ls; echo out > /workspace/out.txt; echo "$WORKSPACE" "$HOME"');
    const ws = box.hostWorkspace!;
    expect(r.stdout).toBe(`plain data\nin.txt\n${ws} ${ws}\n`);
    expect((await box.readFile('/workspace/out.txt')).toString()).toBe('out\n');
    // A word that merely contains the name is left alone.
    expect((await box.exec('echo /workspaces /my/workspace')).stdout).toBe('/workspaces /my/workspace\n');
  });

  it('its egress is a per-session loopback port', async () => {
    const box = (await driver.get('sess_plain_ws'))!;
    const r = await box.exec('curl -sS "$AGENT_SERVICE_EGRESS/x"', { timeoutMs: 10_000 });
    expect(r.stdout).toBe('egress of sess_plain_ws: GET /x');
    await driver.destroy('sess_plain_ws');
    await driver.destroy('sess_plain_ws2');
  });
});

describe.skipIf(!cgroupSupport())('machine shape through cgroups', () => {
  const driver = createLocalDriver({ rootDir: root });

  it('memoryMb caps memory: a command that needs more is killed, a small one runs', async () => {
    const box = await driver.provision({ sessionId: 'sess_shape', memoryMb: 64, vcpus: 2 });
    const big = await box.exec('python3 -c "b = bytearray(200 * 1024 * 1024); print(len(b))"', { timeoutMs: 30_000 });
    expect(big.exitCode).not.toBe(0);
    expect(big.stdout).not.toContain('209715200');
    const small = await box.exec('python3 -c "b = bytearray(8 * 1024 * 1024); print(len(b))"', { timeoutMs: 30_000 });
    expect(small.stdout).toBe('8388608\n');
  });

  it('vcpus is a CPU quota of that many CPU periods', () => {
    const found = execFileSync('find', ['/sys/fs/cgroup', '-maxdepth', '8', '-type', 'd', '-name', 'sandbox-sess_shape']).toString().trim().split('\n');
    const quota = found.flatMap((d) => [path.join(d, 'cpu.cfs_quota_us'), path.join(d, 'cpu.max')]).find((f) => fs.existsSync(f))!;
    const text = fs.readFileSync(quota, 'utf8').trim();
    expect(text === '200000' || text === '200000 100000').toBe(true);
  });

  it('destroy removes the cgroup', async () => {
    await driver.destroy('sess_shape');
    const left = execFileSync('find', ['/sys/fs/cgroup', '-maxdepth', '8', '-type', 'd', '-name', 'sandbox-sess_shape']).toString().trim();
    expect(left).toBe('');
  });
});
