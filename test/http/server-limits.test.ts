// The HTTP server's own limits (src/http/server-limits.ts) on a bare node:http server with short
// timeouts: slow headers and slow bodies are cut with 408 in the envelope, a response that
// lasts longer than the request timeout (an SSE stream, a download) is not, oversized headers
// answer 431 and garbage 400, both in the envelope.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyServerLimits,
  serverOptions,
  serverTimeouts,
  HEADERS_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  MAX_HEADER_BYTES,
} from '../../src/http/server-limits.js';

let server: http.Server;
let port: number;

beforeAll(async () => {
  process.env.HTTP_HEADERS_TIMEOUT_MS = '400';
  process.env.HTTP_REQUEST_TIMEOUT_MS = '1000';
  server = http.createServer(serverOptions(), (req, res) => {
    if (req.url === '/stream') {
      // an SSE-like answer that outlives the request timeout
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let n = 0;
      const timer = setInterval(() => {
        res.write(`data: ${n}\n\n`);
        if (++n === 12) {
          clearInterval(timer);
          res.end();
        }
      }, 200);
      req.on('close', () => clearInterval(timer));
      return;
    }
    let size = 0;
    req.on('data', (c: Buffer) => (size += c.length));
    req.on('end', () => res.end(JSON.stringify({ size })));
  });
  applyServerLimits(server);
  delete process.env.HTTP_HEADERS_TIMEOUT_MS;
  delete process.env.HTTP_REQUEST_TIMEOUT_MS;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

/** Writes `chunks` on a raw socket (each after `gapMs`), returns everything read until close. */
function rawExchange(chunks: string[], gapMs = 0, maxMs = 5_000): Promise<{ text: string; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (d) => (text += d.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, ms: Date.now() - started });
    });
    let i = 0;
    const next = () => {
      if (i < chunks.length && !socket.destroyed) socket.write(chunks[i++]!);
      if (i < chunks.length) timer = setTimeout(next, gapMs);
    };
    next();
    setTimeout(() => socket.destroy(), maxMs).unref();
  });
}

const envelopeOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

describe('server limits', () => {
  it('are set deliberately: defaults, and the environment overrides the timeouts', () => {
    expect(serverTimeouts({})).toEqual({ headersMs: HEADERS_TIMEOUT_MS, requestMs: REQUEST_TIMEOUT_MS });
    expect(serverTimeouts({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '2000' })).toEqual({ headersMs: 2000, requestMs: 2000 });
    expect(serverOptions().maxHeaderSize).toBe(MAX_HEADER_BYTES);
    expect(server.keepAliveTimeout).toBe(KEEP_ALIVE_TIMEOUT_MS);
    expect(server.timeout).toBe(0);
  });

  it('headers that do not arrive in time: 408 in the envelope', async () => {
    const { text, ms } = await rawExchange(['GET / HTTP/1.1\r\nHost: x\r\n']);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(envelopeOf(text)).toEqual({ error: { code: 'request_timeout', message: expect.any(String) } });
    expect(ms).toBeLessThan(2_500);
  });

  it('a body trickling in past the request timeout: 408 in the envelope', async () => {
    const head = 'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n';
    const { text, ms } = await rawExchange([head, ...Array.from({ length: 12 }, () => 'x')], 250);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(envelopeOf(text).error.code).toBe('request_timeout');
    expect(ms).toBeLessThan(3_000);
  });

  it('a response longer than the request timeout (SSE, downloads) is not cut', async () => {
    const started = Date.now();
    const res = await fetch(`http://127.0.0.1:${port}/stream`);
    const body = await res.text();
    expect(Date.now() - started).toBeGreaterThan(2_000); // > 2× the request timeout
    expect(body.match(/data: /g)).toHaveLength(12);
  });

  it('an idle keep-alive connection outlives both timeouts (they bound receiving a request)', async () => {
    const { text } = await rawExchange(['GET / HTTP/1.1\r\nHost: x\r\n\r\n', 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'], 2_000, 2_600);
    expect(text.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
  });

  it('headers over the limit: 431 in the envelope; just under passes', async () => {
    const over = await rawExchange([`GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`]);
    expect(over.text).toMatch(/^HTTP\/1\.1 431 /);
    expect(envelopeOf(over.text)).toEqual({ error: { code: 'headers_too_large', message: expect.any(String) } });
    const under = await fetch(`http://127.0.0.1:${port}/`, { headers: { 'x-pad': 'a'.repeat(MAX_HEADER_BYTES - 1024) } });
    expect(under.status).toBe(200);
  });

  it('a malformed request: 400 in the envelope', async () => {
    const { text } = await rawExchange(['GARBAGE\0 / HTTP/9\r\n\r\n']);
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(envelopeOf(text)).toEqual({ error: { code: 'invalid_request', message: 'malformed HTTP request' } });
  });
});
