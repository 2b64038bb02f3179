// The note a session's system prompt carries about its mounted memory stores: where each is,
// the store's name and description, the mount's instructions and access.
import { prisma } from '../db/client.js';
import type { SessionResource } from '../generated/prisma/client.js';

export interface MemoryMountNote {
  path: string;
  name: string;
  description: string | null;
  instructions: string | null;
  access: string;
}

/**
 * What the system prompt says about the session's mounted stores (one query, none without
 * mounts). `resources`: the session's resources already read this turn (oldest first).
 */
export async function memoryMountNotes(sessionId: string, resources?: SessionResource[]): Promise<MemoryMountNote[]> {
  const mounts = resources
    ? resources.filter((r) => r.type === 'memory_store')
    : await prisma.sessionResource.findMany({ where: { sessionId, type: 'memory_store' }, orderBy: { createdAt: 'asc' } });
  if (!mounts.length) return [];
  const stores = await prisma.memoryStore.findMany({ where: { id: { in: mounts.map((m) => m.memoryStoreId!) } } });
  const byId = new Map(stores.map((s) => [s.id, s]));
  return mounts.map((m) => ({
    path: m.mountPath,
    name: byId.get(m.memoryStoreId!)?.name ?? m.memoryStoreId!,
    description: byId.get(m.memoryStoreId!)?.description ?? null,
    instructions: m.instructions,
    access: m.access ?? 'read_write',
  }));
}

export function memoryPromptSection(notes: MemoryMountNote[] | undefined): string | null {
  if (!notes?.length) return null;
  const lines = [
    '<memory>',
    'Memory stores are mounted as directories: notes kept across sessions. Read them with your file tools before you start;',
    'write what you learn that a later session should know as small text files there (read_only stores cannot be written).',
  ];
  for (const n of notes) {
    lines.push(`- ${n.path} (${n.access}): ${n.name}${n.description ? ` — ${n.description}` : ''}`);
    if (n.instructions) lines.push(`  instructions: ${n.instructions}`);
  }
  lines.push('</memory>');
  return lines.join('\n');
}
