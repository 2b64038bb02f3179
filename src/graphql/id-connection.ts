// Relay connections over rows whose ids sort by creation (`<prefix>_<sortable id>`), newest
// first, whose nodes are a domain's spec-shaped views. Cursors are opaque: base64 of
// `GPC:S:<id>`, the form Pothos' Prisma plugin issued before, so cursors handed out then (and the
// REST check of src/pagination/page-token.ts) stay valid.
import { resolveCursorConnection, type DefaultConnectionArguments } from '@pothos/plugin-relay';
import { AppError } from '../errors.js';

const PREFIX = 'GPC:S:';
const MAX_CURSOR_LENGTH = 200;

function idCursor(id: string): string {
  return Buffer.from(`${PREFIX}${id}`).toString('base64');
}

function idOfCursor(cursor: string): string {
  const text = cursor.length <= MAX_CURSOR_LENGTH ? Buffer.from(cursor, 'base64').toString('utf8') : '';
  if (!text.startsWith(PREFIX) || text.length === PREFIX.length) throw new AppError('invalid_request', 'the cursor is not one this service returned');
  return text.slice(PREFIX.length);
}

/** What a loader adds to its query: id bounds, order and page size (one query per page). */
interface IdPage {
  where: { id?: { lt?: string; gt?: string } };
  orderBy: { id: 'asc' | 'desc' };
  take: number;
}

interface PageSizes {
  defaultSize: number;
  maxSize: number;
}

/** One page of a newest-first connection; `load` runs one query with the page's bounds. */
export function newestFirst<T extends { id: string }>(args: DefaultConnectionArguments, sizes: PageSizes, load: (page: IdPage) => Promise<T[]>) {
  return resolveCursorConnection<Promise<T[]>>({ args, ...sizes, toCursor: (node: T) => idCursor(node.id) }, ({ before, after, limit, inverted }) => {
    const id = { ...(after ? { lt: idOfCursor(after) } : {}), ...(before ? { gt: idOfCursor(before) } : {}) };
    // `last`/`before` pages read oldest first from the bound; the helper puts them back in order.
    return load({ where: after || before ? { id } : {}, orderBy: { id: inverted ? 'asc' : 'desc' }, take: limit });
  });
}
