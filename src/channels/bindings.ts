// Bindings: where a connection's messages go. A thread binding routes one thread; the
// connection-level binding (thread_id null, is_default) is the single fallback slot. A
// destination is exactly one session or one channel webhook endpoint of the universe.
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import type { Viewer } from '../auth/viewer.js';
import type { ChannelBinding } from '../generated/prisma/client.js';
import { resolveSession } from '../sessions/sessions.js';
import { channelId } from './ids.js';
import { findChannelWebhook } from './endpoints.js';
import type { ChannelBindingJson, CreateBindingBody, Destination } from './contract.js';

/** The connection-level slot's thread key (thread bindings use their thread id). */
export const CONNECTION_SLOT = '';

export interface ResolvedDestination {
  sessionId: string | null;
  webhookEndpointId: string | null;
}

export async function resolveDestination(viewer: Viewer, d: Destination): Promise<ResolvedDestination> {
  if (d.session !== undefined) {
    const session = await resolveSession(viewer, d.session);
    if (session.status === 'terminated') throw new AppError('session_archived', 'the session is archived; bind an active session');
    return { sessionId: session.id, webhookEndpointId: null };
  }
  const endpoint = await findChannelWebhook(viewer, d.webhook!);
  return { sessionId: null, webhookEndpointId: endpoint.id };
}

type BindingRow = ChannelBinding & { webhookEndpoint?: { status: string } | null };

export function bindingJson(b: BindingRow): ChannelBindingJson {
  return {
    id: b.id,
    connection_id: b.connectionId,
    thread_id: b.threadId,
    destination: b.sessionId ? { session: b.sessionId } : { webhook: b.webhookEndpointId! },
    is_default: b.isDefault,
    // A binding whose endpoint was disabled by failures routes nothing until it is re-enabled.
    status: b.webhookEndpoint?.status === 'disabled' ? 'disabled' : b.status,
    route_key: b.routeKey,
  };
}

const withEndpoint = { webhookEndpoint: { select: { status: true } } } as const;

async function ownConnection(viewer: Viewer, id: string) {
  const connection = await prisma.channelConnection.findFirst({ where: { id, universeId: viewer.universe.id }, select: { id: true } });
  if (!connection) throw new AppError('not_found', 'channel connection not found');
  return connection;
}

export async function createBinding(viewer: Viewer, body: CreateBindingBody): Promise<BindingRow> {
  const connection = await ownConnection(viewer, body.connection_id);
  const dest = await resolveDestination(viewer, body.destination);
  const existing = await prisma.channelBinding.findUnique({ where: { connectionId_threadKey: { connectionId: connection.id, threadKey: body.thread_id } } });
  if (existing) throw new AppError('conflict', `thread ${body.thread_id} is already bound (${existing.id}); delete that binding first`);
  return prisma.channelBinding.create({
    data: {
      id: channelId('chbind'),
      universeId: viewer.universe.id,
      connectionId: connection.id,
      threadId: body.thread_id,
      threadKey: body.thread_id,
      ...dest,
      isDefault: false,
      routeKey: body.route_key ?? body.thread_id.slice(0, 60),
    },
    include: withEndpoint,
  });
}

export function listBindings(viewer: Viewer, connectionId?: string): Promise<BindingRow[]> {
  return prisma.channelBinding.findMany({
    where: { universeId: viewer.universe.id, ...(connectionId ? { connectionId } : {}) },
    orderBy: { id: 'asc' },
    include: withEndpoint,
  });
}

export async function findBinding(viewer: Viewer, id: string): Promise<BindingRow> {
  const binding = await prisma.channelBinding.findFirst({ where: { id, universeId: viewer.universe.id }, include: withEndpoint });
  if (!binding) throw new AppError('not_found', 'channel binding not found');
  return binding;
}

export async function deleteBinding(viewer: Viewer, id: string): Promise<void> {
  const binding = await findBinding(viewer, id);
  await prisma.channelBinding.delete({ where: { id: binding.id } });
}

/** PUT …/binding: sets the connection-level slot. */
export async function setConnectionBinding(viewer: Viewer, connectionId: string, destination: Destination): Promise<BindingRow> {
  const connection = await ownConnection(viewer, connectionId);
  const dest = await resolveDestination(viewer, destination);
  return putSlot(viewer.universe.id, connection.id, CONNECTION_SLOT, null, dest, 'default');
}

export async function clearConnectionBinding(viewer: Viewer, connectionId: string): Promise<void> {
  const connection = await ownConnection(viewer, connectionId);
  const n = await prisma.channelBinding.deleteMany({ where: { connectionId: connection.id, threadKey: CONNECTION_SLOT } });
  if (!n.count) throw new AppError('not_found', 'the connection has no binding');
}

/** Creates or replaces the binding of one slot (connection-level or a thread). */
export function putSlot(
  universeId: string,
  connectionId: string,
  threadKey: string,
  threadId: string | null,
  dest: ResolvedDestination,
  routeKey: string,
): Promise<BindingRow> {
  return prisma.channelBinding.upsert({
    where: { connectionId_threadKey: { connectionId, threadKey } },
    create: { id: channelId('chbind'), universeId, connectionId, threadKey, threadId, ...dest, isDefault: threadKey === CONNECTION_SLOT, routeKey },
    update: { ...dest, status: 'active' },
    include: withEndpoint,
  });
}

/** The binding an inbound message of this thread follows: the thread's, else the connection's. */
export async function routeFor(connectionId: string, threadId: string): Promise<BindingRow | null> {
  const candidates = await prisma.channelBinding.findMany({ where: { connectionId, threadKey: { in: [threadId, CONNECTION_SLOT] } }, include: withEndpoint });
  return candidates.find((b) => b.threadKey === threadId) ?? candidates.find((b) => b.threadKey === CONNECTION_SLOT) ?? null;
}
