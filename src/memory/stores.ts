// Memory store rules: create, read, list, patch, archive (idempotent; new mounts are refused,
// existing ones stay readable), and the check a new session's mount makes.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Viewer } from '../auth/viewer.js';
import type { MemoryStore, Prisma } from '../generated/prisma/client.js';
import type { CreateMemoryStoreBody, PatchMemoryStoreBody } from './contract.js';

const notFound = () => new AppError('not_found', 'memory store not found');

export async function findMemoryStore(viewer: Viewer, id: string): Promise<MemoryStore> {
  const store = await prisma.memoryStore.findFirst({ where: { id, universeId: viewer.universe.id } });
  if (!store) throw notFound();
  return store;
}

/** A page of the universe's stores (the caller's bounds, order and size): one query. */
export function listMemoryStores(
  viewer: Viewer,
  page: { where?: Prisma.MemoryStoreWhereInput; orderBy: Prisma.MemoryStoreOrderByWithRelationInput; take: number },
): Promise<MemoryStore[]> {
  return prisma.memoryStore.findMany({ where: { ...page.where, universeId: viewer.universe.id }, orderBy: page.orderBy, take: page.take });
}

export function createMemoryStore(viewer: Viewer, body: CreateMemoryStoreBody): Promise<MemoryStore> {
  return prisma.memoryStore.create({
    data: {
      id: newId('memstore'),
      universeId: viewer.universe.id,
      name: body.name,
      description: body.description ?? null,
      metadata: body.metadata as Prisma.InputJsonValue,
    },
  });
}

export async function patchMemoryStore(viewer: Viewer, id: string, body: PatchMemoryStoreBody): Promise<MemoryStore> {
  const store = await findMemoryStore(viewer, id);
  if (store.archivedAt) throw new AppError('conflict', 'the memory store is archived');
  const data: Prisma.MemoryStoreUpdateInput = {};
  if (body.name !== undefined) data.name = body.name;
  if (body.description !== undefined) data.description = body.description;
  if (body.metadata !== undefined) data.metadata = body.metadata as Prisma.InputJsonValue;
  if (!Object.keys(data).length) return store;
  return prisma.memoryStore.update({ where: { id: store.id }, data });
}

export async function archiveMemoryStore(viewer: Viewer, id: string): Promise<MemoryStore> {
  const store = await findMemoryStore(viewer, id);
  if (store.archivedAt) return store;
  return prisma.memoryStore.update({ where: { id: store.id }, data: { archivedAt: new Date() } });
}

/** The store a new session mounts: 404 when not in the universe, 409 conflict when archived (like an environment). */
export async function memoryStoreForMount(universeId: string, id: string): Promise<MemoryStore> {
  const store = await prisma.memoryStore.findFirst({ where: { id, universeId } });
  if (!store) throw notFound();
  if (store.archivedAt) throw new AppError('conflict', `memory store ${id} is archived; new sessions cannot mount it`);
  return store;
}
