// `X-Service-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>" keyed by the whsec_ secret>`.
import { createHmac } from 'node:crypto';

export function sign(secret: string, timestamp: number, body: string): string {
  return 'v1=' + createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}
