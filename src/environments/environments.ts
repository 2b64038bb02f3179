// Environment rules: create, read, list, patch (a packages change makes a new version, the
// install cache key; an allow-list change reaches live sessions' egress at once), archive, and
// the check a new session makes.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Viewer } from '../auth/viewer.js';
import type { Environment, Prisma } from '../generated/prisma/client.js';
import { publishPolicyChange } from '../egress/session-policy.js';
import type { CreateEnvironmentBody, EnvironmentPackages, PatchEnvironmentBody } from './contract.js';
import { packagesOf } from './view.js';
import { networkOf } from '../egress/environment-allow-list.js';

const notFound = () => new AppError('not_found', 'environment not found');

export async function findEnvironment(viewer: Viewer, id: string): Promise<Environment> {
  const env = await prisma.environment.findFirst({ where: { id, universeId: viewer.universe.id } });
  if (!env) throw notFound();
  return env;
}

/** A page of the universe's environments (the caller's bounds, order and size): one query. */
export function listEnvironments(
  viewer: Viewer,
  page: { where?: Prisma.EnvironmentWhereInput; orderBy: Prisma.EnvironmentOrderByWithRelationInput; take: number },
): Promise<Environment[]> {
  return prisma.environment.findMany({ where: { ...page.where, universeId: viewer.universe.id }, orderBy: page.orderBy, take: page.take });
}

/** Hosts compare case-insensitively: stored lower-cased, once. */
const lowerHosts = (hosts: string[]) => [...new Set(hosts.map((h) => h.toLowerCase()))];

export async function createEnvironment(viewer: Viewer, body: CreateEnvironmentBody): Promise<Environment> {
  return prisma.environment.create({
    data: {
      id: newId('env'),
      universeId: viewer.universe.id,
      name: body.name,
      description: body.description ?? null,
      packages: body.packages,
      network: { allowed_hosts: lowerHosts(body.network.allowed_hosts) },
    },
  });
}

const samePackages = (a: EnvironmentPackages, b: EnvironmentPackages) => JSON.stringify(a) === JSON.stringify(b);

export async function patchEnvironment(viewer: Viewer, id: string, body: PatchEnvironmentBody): Promise<Environment> {
  const env = await findEnvironment(viewer, id);
  if (env.archivedAt) throw new AppError('conflict', 'the environment is archived');
  const data: Prisma.EnvironmentUpdateInput = {};
  if (body.name !== undefined) data.name = body.name;
  if (body.description !== undefined) data.description = body.description;
  if (body.packages !== undefined) {
    const current = packagesOf(env);
    const next = { apt: body.packages.apt ?? current.apt, npm: body.packages.npm ?? current.npm, pip: body.packages.pip ?? current.pip };
    if (!samePackages(current, next)) Object.assign(data, { packages: next, version: { increment: 1 } });
  }
  let networkChanged = false;
  if (body.network !== undefined) {
    const hosts = lowerHosts(body.network.allowed_hosts);
    networkChanged = JSON.stringify(hosts) !== JSON.stringify(networkOf(env).allowed_hosts);
    data.network = { allowed_hosts: hosts };
  }
  if (!Object.keys(data).length) return env;
  const updated = await prisma.environment.update({ where: { id: env.id }, data });
  if (networkChanged) await republishSessions(env.id);
  return updated;
}

/** Live sessions of the environment drop their compiled egress policy in every process. */
async function republishSessions(environmentId: string): Promise<void> {
  const sessions = await prisma.session.findMany({ where: { environmentId, status: { not: 'terminated' } }, select: { id: true } });
  await Promise.all(sessions.map((s) => publishPolicyChange(s.id)));
}

/** Idempotent; sessions already running keep the environment, new ones are refused. */
export async function archiveEnvironment(viewer: Viewer, id: string): Promise<Environment> {
  const env = await findEnvironment(viewer, id);
  if (env.archivedAt) return env;
  return prisma.environment.update({ where: { id: env.id }, data: { archivedAt: new Date() } });
}

/**
 * The environment a new session names: 404 `not_found` when it is not in the universe, 409
 * `conflict` when it is archived (the contract's choice, like an archived agent).
 */
export async function environmentForNewSession(universeId: string, id: string): Promise<Environment> {
  const env = await prisma.environment.findFirst({ where: { id, universeId } });
  if (!env) throw notFound();
  if (env.archivedAt) throw new AppError('conflict', 'the environment is archived; new sessions are refused');
  return env;
}
