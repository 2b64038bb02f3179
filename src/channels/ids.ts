// Channel resource ids: `<prefix>_<ULID>` like every other id (src/ids.ts keeps the shared list).
import { randomBytes } from 'node:crypto';
import { nextUlid } from '../ids.js';

export type ChannelIdPrefix = 'chapp' | 'chconn' | 'chbind' | 'whep' | 'chin' | 'chrep' | 'chdlv' | 'lbmsg' | 'evt' | 'whdl';

export function channelId(prefix: ChannelIdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

/** A connect token: URL-safe, and inside Telegram's `start` parameter alphabet (A-Z a-z 0-9 _ -). */
export function connectToken(): string {
  return randomBytes(24).toString('base64url');
}

/** A short code an end user types (WhatsApp code flow). */
export function connectCode(): string {
  const n = randomBytes(4).readUInt32BE(0) % 1_000_000;
  return `CONNECT-${String(n).padStart(6, '0')}`;
}
