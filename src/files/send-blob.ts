// Sends a blob's read stream as a response body with every error handled: a blob that cannot
// be opened answers an error before any byte is sent; a read failure mid-body cuts the response
// (its Content-Length then tells the client it is incomplete); a client leaving mid-download
// closes the file at once.
import type { Response } from 'express';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { logger } from '../logger.js';
import { sendError } from '../wire/error-envelope.js';

/** Resolves once an fs.ReadStream has opened its file (null) or failed to (the error). */
function opened(stream: Readable & { pending?: boolean }): Promise<Error | null> {
  if (stream.pending !== true) return Promise.resolve(stream.errored ?? null);
  return new Promise((resolve) => {
    const onReady = () => {
      stream.off('error', onError);
      resolve(null);
    };
    const onError = (err: Error) => {
      stream.off('ready', onReady);
      resolve(err);
    };
    stream.once('ready', onReady);
    stream.once('error', onError);
  });
}

export async function sendBlob(stream: Readable, res: Response, headers: Record<string, string>): Promise<void> {
  stream.on('error', () => undefined); // errors are handled below; never an unhandled 'error'
  const openError = await opened(stream);
  if (openError) {
    stream.destroy();
    logger.error({ err: openError }, 'blob of a file row cannot be read');
    return sendError(res, 500, 'internal_error', 'the file content cannot be read');
  }
  res.status(200).set(headers);
  try {
    await pipeline(stream, res);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ERR_STREAM_PREMATURE_CLOSE') logger.warn({ err }, 'file download cut short');
    res.destroy();
  }
}
