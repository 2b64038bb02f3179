// Page tokens and cursors are opaque to clients and validated before they reach a query:
// garbage answers 400 invalid_request, never 500.
//  - our own page tokens (files, session resources): base64url of `<kind>:<last id>`
//  - connection cursors made by Pothos' Prisma plugin (REST `GET /skills?cursor=`): base64 of
//    `GPC:S:<id>`; checked here so REST refuses garbage before GraphQL decodes it.
import { z } from 'zod';
import { AppError } from '../errors.js';

const ID_TAIL = '[0-9a-z]{1,64}';
const MAX_TOKEN_LENGTH = 200;

export type PageKind = 'files' | 'resources' | 'outcomes';
const ID_OF_KIND: Record<PageKind, RegExp> = {
  files: new RegExp(`^file_${ID_TAIL}$`),
  resources: new RegExp(`^sesrsc_${ID_TAIL}$`),
  outcomes: new RegExp(`^outc_${ID_TAIL}$`),
};

export function encodePageToken(kind: PageKind, lastId: string): string {
  return Buffer.from(`${kind}:${lastId}`).toString('base64url');
}

/** The last id a page token carries; 400 invalid_request for anything this service did not issue. */
export function decodePageToken(kind: PageKind, token: string): string {
  const invalid = new AppError('invalid_request', 'page is not a next_page value this service returned');
  if (token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) throw invalid;
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const prefix = `${kind}:`;
  if (!text.startsWith(prefix)) throw invalid;
  const id = text.slice(prefix.length);
  if (!ID_OF_KIND[kind].test(id)) throw invalid;
  return id;
}

/** Whether `cursor` is a Pothos Prisma connection cursor over an id `<prefix>_…`. */
export function isConnectionCursor(cursor: string, prefix: string): boolean {
  if (cursor.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9+/]+={0,2}$/.test(cursor)) return false;
  const text = Buffer.from(cursor, 'base64').toString('utf8');
  return new RegExp(`^GPC:S:${prefix}_${ID_TAIL}$`).test(text);
}

/** A REST query parameter carrying a connection cursor over `<prefix>_…` ids. */
export const connectionCursor = (prefix: string) =>
  z.string().refine((c) => isConnectionCursor(c, prefix), { message: 'is not a cursor this service returned' });
