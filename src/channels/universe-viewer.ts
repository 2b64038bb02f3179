// Inbound platform messages act inside the connection's universe without a caller: this is the
// viewer they act as (the universe owner, write scope, bound to that universe).
import { prisma } from '../db/client.js';
import type { Viewer } from '../auth/viewer.js';

export async function universeViewer(universeId: string): Promise<Viewer> {
  const universe = await prisma.universe.findUniqueOrThrow({ where: { id: universeId }, include: { owner: true } });
  const { owner, ...bare } = universe;
  return { user: owner, auth: 'token', scopes: ['read', 'write'], tokenId: null, tokenUniverseId: universe.id, universe: bare };
}
