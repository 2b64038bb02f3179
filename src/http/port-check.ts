// Whether the service can listen where it is told, asked before a start changes anything: a
// first start that failed on a taken port after it had created the owner would have shown its
// generated password to nobody (the banner prints once listening).
import net from 'node:net';

/** The port taken (or not ours to take): EADDRINUSE / EACCES, as listen would fail. */
export class PortUnavailableError extends Error {
  constructor(
    readonly code: string,
    readonly host: string,
    readonly port: number,
  ) {
    super(
      code === 'EADDRINUSE'
        ? `port ${port} on ${host} is already in use (another program, or the service already running): stop it, or start with PORT=<a free port>`
        : `cannot listen on ${host}:${port} (${code}): start with PORT=<a port above 1023> or HOST=<an address of this machine>`,
    );
    this.name = 'PortUnavailableError';
  }
}

/** Resolves when `port` on `host` can be listened on (it is released again at once); port 0 always can. */
export function checkPortFree(port: number, host: string): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => reject(new PortUnavailableError(err.code ?? 'EADDRINUSE', host, port)));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}
