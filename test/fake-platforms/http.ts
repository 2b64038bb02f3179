// Shared bits of the fake platform servers: a JSON/form body reader, a JSON answer, a server on
// a free loopback port, and the list of requests each fake records for assertions.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  /** When it came (Date.now()). */
  at?: number;
}

export async function readBody(req: http.IncomingMessage): Promise<{ raw: Buffer; body: any }> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  const type = req.headers['content-type'] ?? '';
  if (!raw.length) return { raw, body: {} };
  if (type.includes('application/x-www-form-urlencoded')) return { raw, body: Object.fromEntries(new URLSearchParams(raw.toString('utf8'))) };
  if (type.includes('application/json')) return { raw, body: JSON.parse(raw.toString('utf8')) };
  return { raw, body: raw };
}

export function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

export async function listen(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>,
): Promise<{ server: http.Server; url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    handler(req, res).catch((err) => {
      if (!res.headersSent) json(res, 500, { error: String(err) });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    server,
    url,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** POSTs to the service as a platform does; returns status, headers and the body text. */
export async function post(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; text: string; json: any; headers: Headers }> {
  const res = await fetch(url, { method: 'POST', headers, body });
  const text = await res.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, text, json: parsed, headers: res.headers };
}
