// Shared bits of the agent tests: the error assertion, a create shortcut, the spec's field lists,
// and a counter of the SQL statements a block of code sends (PGlite or PostgreSQL).
import { expect } from 'vitest';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import type { ApiResponse, TestServer } from './server.js';

export const LIST_KEYS = [
  'agentType',
  'archived',
  'capabilities',
  'createdAt',
  'displayName',
  'harnessVersion',
  'id',
  'llm',
  'name',
  'reasoningEffort',
  'sessionCount',
  'version',
];
export const DETAIL_KEYS = [
  ...LIST_KEYS,
  'customData',
  'defaultSessionId',
  'description',
  'instructions',
  'mcpServers',
  'metadata',
  'multiagent',
  'prompt',
  'promptVersion',
  'skills',
  'slug',
  'universe',
].sort();

export function expectError(res: ApiResponse, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ error: { code, message: expect.any(String) } });
}

export async function createAgent(s: TestServer, body: unknown = {}, token?: string): Promise<any> {
  const res = await s.api('POST', '/agents', { body, ...(token ? { token } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.agent;
}

/** The GraphQL error code of a response (first error). */
export const gqlCode = (res: ApiResponse<{ errors?: any[] }>) => res.body.errors?.[0]?.extensions?.code;

function ownerOf(proto: object, method: string): any {
  for (let p: any = proto; p; p = Object.getPrototypeOf(p)) if (Object.hasOwn(p, method)) return p;
  return null;
}

/**
 * Counts the SQL statements sent while `fn` runs (both drivers' query entry points); with
 * `matching`, only statements whose text matches it (the process's background pollers run too).
 */
/** `matching`: a pattern of the statement's text, or a test of its text and parameter values. */
export async function countQueries(fn: () => Promise<unknown>, matching?: RegExp | ((text: string, values: unknown[]) => boolean)): Promise<number> {
  let n = 0;
  const targets = [ownerOf(pg.Client.prototype, 'query'), ownerOf(PGlite.prototype, 'query')].filter(Boolean);
  const originals = targets.map((t) => t.query);
  targets.forEach((t, i) => {
    t.query = function (this: unknown, ...args: unknown[]) {
      const text = typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string } | undefined)?.text ?? '');
      const values = (Array.isArray(args[1]) ? args[1] : ((args[0] as { values?: unknown[] } | undefined)?.values ?? [])) as unknown[];
      if (!matching || (typeof matching === 'function' ? matching(text, values) : matching.test(text))) n++;
      return originals[i].apply(this, args);
    };
  });
  try {
    await fn();
  } finally {
    targets.forEach((t, i) => (t.query = originals[i]));
  }
  return n;
}

/** A skill with one revision, written straight to the database (the skills API is not under test here). */
export async function seedSkill(s: TestServer, universeSlug?: string): Promise<{ skillId: string; revisionId: string }> {
  const { prisma } = await import('../../src/db/client.js');
  const slug = universeSlug ?? (await s.api('GET', '/whoami')).body.universe.slug;
  const universe = await prisma.universe.findUniqueOrThrow({ where: { slug } });
  const tag = randomBytes(8).toString('hex');
  const skillId = `skill_t${tag}`;
  const revisionId = `skr_t${tag}`;
  await prisma.skill.create({ data: { id: skillId, universeId: universe.id, displayName: `Skill ${tag}`, name: `skill-${tag}` } });
  await prisma.skillRevision.create({ data: { id: revisionId, skillId, name: `skill-${tag}`, description: 'for tests', files: [] } });
  await prisma.skill.update({ where: { id: skillId }, data: { latestRevisionId: revisionId } });
  return { skillId, revisionId };
}
