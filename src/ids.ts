// Resource ids: `<prefix>_<ULID>` (sortable by creation time, 26 chars of Crockford base32).
import { monotonicFactory } from 'ulid';
import { randomBytes } from 'node:crypto';

const nextUlid = monotonicFactory();

export type IdPrefix =
  | 'usr' | 'uni' | 'tok' | 'agent' | 'sess' | 'evt' | 'pv' | 'dev' | 'ws'
  | 'file' | 'sesrsc' | 'skill' | 'skr' | 'rtn' | 'rrun' | 'whep' | 'whdl' | 'msg' | 'vault' | 'env';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

/** Unguessable secret text (base62-ish, url safe). */
export function secretText(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
