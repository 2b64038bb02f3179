// Matches `/v1` paths to the route table, compiled once. The rules are Express's (which served
// /v1 before): routes are tried in table order and the first whose path matches and that takes
// the method wins (a GET route also answers HEAD); `{param}` is one or more characters other
// than `/`, percent-decoded; literal segments are case-sensitive; one trailing slash is allowed.
// A path that matches with no route for the method is a 405 with the path's methods in Allow.
// Why not Express's router: typed params and the 405 come from the same one lookup per request,
// grouped by first segment, without Express's middleware layers on the hot path.
import type { RestRoute } from './route.js';

export type MatchResult =
  | { kind: 'route'; route: RestRoute; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: string }
  | { kind: 'not_found' };

interface CompiledPath {
  regexp: RegExp;
  names: string[];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** `/agents/{id}` → `^(?:\/agents\/([^\/]+))(?:\/$)?$` (what path-to-regexp makes of `/agents/:id`). */
function compilePath(path: string): CompiledPath {
  const names: string[] = [];
  const source = path.replace(/\{(\w+)\}|[^{]+/g, (part, name: string | undefined) => {
    if (name === undefined) return escapeRegExp(part);
    names.push(name);
    return '([^\\/]+)';
  });
  return { regexp: new RegExp(`^(?:${source})(?:\\/$)?$`), names };
}

/** A malformed percent-escape in a path parameter: 400, as Express answered it. */
export class ParamDecodeError extends Error {
  readonly status = 400;
}

function decodeParam(value: string, lenient: boolean): string {
  if (value.indexOf('%') === -1) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    if (lenient) return value;
    throw new ParamDecodeError(`Failed to decode param '${value}'`);
  }
}

function paramsOf(compiled: CompiledPath, m: RegExpExecArray, lenient: boolean): Record<string, string> {
  const params: Record<string, string> = {};
  compiled.names.forEach((name, i) => {
    params[name] = decodeParam(m[i + 1]!, lenient);
  });
  return params;
}

/** The first segment of a path (`/agents/{id}` → `agents`), or '' when it is a parameter. */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  const seg = end === -1 ? path.slice(1) : path.slice(1, end);
  return seg.startsWith('{') ? '' : seg;
}

/**
 * Routes are grouped by their first literal segment (table order kept inside each group; routes
 * starting with a parameter belong to every group), so a request tries only the routes that can
 * match it.
 */
/**
 * `lenient`: an undecodable parameter is kept as sent instead of throwing (the request is already
 * known to be refused once its token is checked: input hygiene found the id malformed).
 */
export function compileRoutes(routes: RestRoute[]): (method: string, path: string, lenient?: boolean) => MatchResult {
  type Entry = { route: RestRoute; compiled: CompiledPath; first: string };
  type PathEntry = { compiled: CompiledPath; allow: string; first: string };
  const entries: Entry[] = routes.map((route) => ({ route, compiled: compilePath(route.path), first: firstSegment(route.path) }));
  const methodsByPath = new Map<string, string[]>();
  for (const { route } of entries) {
    const methods = methodsByPath.get(route.path) ?? methodsByPath.set(route.path, []).get(route.path)!;
    if (!methods.includes(route.method)) methods.push(route.method);
  }
  const pathEntries: PathEntry[] = [...methodsByPath].map(([path, methods]) => ({
    compiled: compilePath(path),
    allow: methods.join(', '),
    first: firstSegment(path),
  }));
  const groups = new Map<string, { routes: Entry[]; paths: PathEntry[] }>();
  const groupOf = (key: string) => ({
    routes: entries.filter((e) => e.first === key || e.first === ''),
    paths: pathEntries.filter((e) => e.first === key || e.first === ''),
  });
  for (const { first } of entries) if (!groups.has(first)) groups.set(first, groupOf(first));
  const fallback = groupOf('');

  return (method, path, lenient = false) => {
    const group = groups.get(firstSegment(path)) ?? fallback;
    const asMethod = method === 'HEAD' ? 'GET' : method;
    for (const { route, compiled } of group.routes) {
      if (route.method !== asMethod) continue;
      const m = compiled.regexp.exec(path);
      if (m) return { kind: 'route', route, params: paramsOf(compiled, m, lenient) };
    }
    for (const { compiled, allow } of group.paths) {
      if (compiled.regexp.test(path)) return { kind: 'method_not_allowed', allow };
    }
    return { kind: 'not_found' };
  };
}
