// Reads a multipart body with busboy for the handlers that stream their own upload (files:
// src/files/upload.ts, skill bundles: src/skills/upload.ts). Every way a body can go wrong (a
// malformed or truncated body, a huge part header, the client leaving mid-upload) ends in one
// refusal with a 4xx, never an unhandled stream error; a refusal stops parsing, drains what is
// left of the body (or drops it when the client left) and rejects once its cleanup is done.
import busboy from 'busboy';
import type http from 'node:http';
import { AppError } from '../errors.js';
import { drainRequest, onClientGone } from './request-stream.js';

export const malformedMultipart = (err: unknown) => new AppError('invalid_request', `malformed multipart body: ${(err as Error)?.message ?? 'unreadable'}`);

/** The outcome of one multipart read, settled once by the part handlers. */
export interface MultipartRead<T> {
  /** Refuses the upload: stops parsing, drains the rest (`drain` false: the client left), rejects. */
  fail(err: AppError, drain?: boolean): void;
  /** Accepts the upload with its value. */
  succeed(value: T): void;
  readonly settled: boolean;
}

/**
 * Pipes `req` into busboy (`config`: limits, preservePath; file names are read as UTF-8) and lets
 * `handle` attach the part listeners; `handle` may return a cleanup run before a refusal rejects
 * (e.g. delete a stored blob).
 */
export function readMultipart<T>(
  req: http.IncomingMessage,
  config: Omit<busboy.BusboyConfig, 'headers'>,
  handle: (bb: busboy.Busboy, read: MultipartRead<T>) => (() => Promise<unknown>) | undefined,
): Promise<T> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      // defParamCharset: file names (Content-Disposition filename="…") are UTF-8, as browsers,
      // curl and fetch's FormData send them; busboy's default reads them as Latin-1.
      bb = busboy({ defParamCharset: 'utf8', ...config, headers: req.headers });
    } catch (err) {
      return reject(malformedMultipart(err));
    }
    let settled = false;
    let stopWatching: () => void = () => undefined;
    let cleanup: (() => Promise<unknown>) | undefined;
    const read: MultipartRead<T> = {
      get settled() {
        return settled;
      },
      fail(err, drain = true) {
        if (settled) return;
        settled = true;
        stopWatching();
        req.unpipe(bb);
        // Not from inside busboy's own callback ('limit', 'file', 'data'): it still uses its state
        // after emitting. Destroying also ends a file stream in progress.
        process.nextTick(() => bb.destroy());
        if (drain) drainRequest(req);
        // Answer once nothing is left behind.
        const cleaned = cleanup ? cleanup().catch(() => undefined) : Promise.resolve();
        void cleaned.then(() => reject(err));
      },
      succeed(value) {
        if (settled) return;
        settled = true;
        stopWatching();
        resolve(value);
      },
    };
    stopWatching = onClientGone(req, (err) => read.fail(malformedMultipart(err), false));
    cleanup = handle(bb, read);
    bb.on('error', (err) => read.fail(malformedMultipart(err)));
    req.pipe(bb);
  });
}
