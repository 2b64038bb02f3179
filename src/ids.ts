// Resource ids: `<prefix>_<ULID>` (sortable by creation time, 26 chars of Crockford base32).
import { monotonicFactory } from 'ulid';
import { randomBytes, randomFillSync } from 'node:crypto';

// ulid's own source of randomness asks the kernel for one byte per character (16 calls per id,
// most of the cost of storing an event); this one takes the same kind of bytes 4 KiB at a time.
const pool = Buffer.alloc(4096);
let next = pool.length;
function pooledRandom(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++]! / 256;
}

/** One ULID (monotonic within a millisecond), upper case, for every id of the service. */
export const nextUlid = monotonicFactory(pooledRandom);

export type IdPrefix =
  | 'usr'
  | 'uni'
  | 'tok'
  | 'agent'
  | 'sess'
  | 'evt'
  | 'pv'
  | 'dev'
  | 'ws'
  | 'file'
  | 'sesrsc'
  | 'skill'
  | 'skr'
  | 'rtn'
  | 'rrun'
  | 'whep'
  | 'whdl'
  | 'msg'
  | 'vault'
  | 'env'
  | 'memstore'
  | 'mem'
  | 'memver'
  | 'outc'
  | 'sthr';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

/** Unguessable secret text (base62-ish, url safe). */
export function secretText(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
