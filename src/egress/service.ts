// The process's egress service: one proxy, fed by per-session Unix sockets (local sandboxes:
// the socket is bind-mounted into the jail), per-session loopback ports (the unisolated
// fallback) and one TCP listener for pods (Kubernetes). Implements what drivers need
// (SandboxEgress) without them knowing the proxy.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { SandboxEgress } from '../sandbox/driver.js';
import { issueSessionCredential } from '../gateway/session-credentials.js';
import { logger } from '../logger.js';
import { createEgressProxy, type EgressProxy } from './proxy.js';
import { openEgressCa, type EgressCa } from './ca.js';
import { egressEnv } from './env.js';

export interface EgressService extends SandboxEgress {
  readonly proxy: EgressProxy;
  readonly ca: EgressCa;
  /** Accepts pods' connections (they authenticate with their session credential). */
  listenTcp(host: string, port: number): Promise<number>;
  close(): Promise<void>;
}

export async function createEgressService(opts: { dataDir: string }): Promise<EgressService> {
  const proxy = createEgressProxy();
  const ca = await openEgressCa(opts.dataDir);
  // The CA files sandboxes read (the certificate only, never the key), written once.
  const caDir = path.join(opts.dataDir, 'egress-ca', 'public');
  fs.mkdirSync(caDir, { recursive: true });
  const caFiles = { cert: path.join(caDir, 'ca.crt'), bundle: path.join(caDir, 'ca-bundle.crt') };
  fs.writeFileSync(caFiles.cert, ca.certPem, { mode: 0o644 });
  fs.writeFileSync(caFiles.bundle, ca.bundlePem, { mode: 0o644 });

  const listeners = new Map<string, net.Server[]>();
  let tcp: net.Server | undefined;

  const listen = (server: net.Server, ...args: unknown[]) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      (server.listen as (...a: unknown[]) => void)(...args, () => {
        server.off('error', reject);
        resolve();
      });
    });
  const add = (sessionId: string, server: net.Server) => listeners.set(sessionId, [...(listeners.get(sessionId) ?? []), server]);

  return {
    proxy,
    ca,
    async serveSocket(sessionId, hostPath) {
      if (listeners.get(sessionId)?.some((s) => s.address() === hostPath)) return;
      await fsp.mkdir(path.dirname(hostPath), { recursive: true });
      await fsp.rm(hostPath, { force: true }); // a stale socket from a previous run
      const server = net.createServer((socket) => proxy.accept(socket, sessionId));
      await listen(server, hostPath);
      await fsp.chmod(hostPath, 0o666); // a sandbox may run under another (mapped) uid
      add(sessionId, server);
    },
    async serveLoopback(sessionId) {
      const existing = listeners.get(sessionId)?.find((s) => typeof s.address() === 'object');
      if (existing) return (existing.address() as net.AddressInfo).port;
      const server = net.createServer((socket) => proxy.accept(socket, sessionId));
      await listen(server, 0, '127.0.0.1');
      add(sessionId, server);
      return (server.address() as net.AddressInfo).port;
    },
    async stop(sessionId) {
      const servers = listeners.get(sessionId) ?? [];
      listeners.delete(sessionId);
      await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
    env(sessionId, endpoint, caDir) {
      return egressEnv({ token: issueSessionCredential(sessionId), endpoint, caDir });
    },
    caFiles: () => caFiles,
    async listenTcp(host, port) {
      tcp = net.createServer((socket) => proxy.accept(socket, null));
      await listen(tcp, port, host);
      const bound = (tcp.address() as net.AddressInfo).port;
      logger.info({ host, port: bound }, 'egress proxy listening for sandbox pods');
      return bound;
    },
    async close() {
      const all = [...listeners.values()].flat();
      listeners.clear();
      if (tcp) all.push(tcp);
      for (const s of all) s.close();
      proxy.close();
      await Promise.all(all.map((s) => new Promise<void>((r) => (s.listening ? s.once('close', () => r()) : r()))));
    },
  };
}
