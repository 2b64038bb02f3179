// Memory stores, memories and versions as the contract shows them, from their rows alone.
import type { Memory, MemoryStore, MemoryVersion } from '../generated/prisma/client.js';
import type { MemoryActor, MemoryOperation, MemoryStoreView, MemorySummaryView, MemoryVersionView, MemoryView } from './contract.js';

export function memoryStoreView(row: MemoryStore): MemoryStoreView {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    metadata: (row.metadata ?? {}) as Record<string, unknown>,
    archived_at: row.archivedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function memorySummaryView(row: Omit<Memory, 'content'>): MemorySummaryView {
  return {
    id: row.id,
    memory_store_id: row.storeId,
    path: row.path,
    content_sha256: row.contentSha256,
    size_bytes: row.sizeBytes,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function memoryView(row: Memory): MemoryView {
  return { ...memorySummaryView(row), content: row.content };
}

export function actorOf(row: Pick<MemoryVersion, 'actorType' | 'actorId'>): MemoryActor {
  return row.actorType === 'session' ? { type: 'session', session_id: row.actorId } : { type: 'user', user_id: row.actorId };
}

export function memoryVersionView(row: MemoryVersion): MemoryVersionView {
  return {
    id: row.id,
    memory_store_id: row.storeId,
    memory_id: row.memoryId,
    operation: row.operation as MemoryOperation,
    path: row.path,
    content: row.content,
    content_sha256: row.contentSha256,
    size_bytes: row.sizeBytes,
    actor: actorOf(row),
    created_at: row.createdAt.toISOString(),
    redacted_at: row.redactedAt?.toISOString() ?? null,
    redacted_by: row.redactedBy,
  };
}
