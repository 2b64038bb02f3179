// Every non-2xx body is `{error: {code, message}}`.
import type { Response } from 'express';

export function sendError(res: Response, status: number, code: string, message: string): void {
  if (res.headersSent) return;
  res.status(status).json({ error: { code, message } });
}
