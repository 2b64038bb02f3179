// The network allow-list a session's environment gives its egress policy: its `allowed_hosts`
// (empty: nothing but the model gateway, which is not a proxied destination), or null when the
// session has no environment (the deployment's EGRESS_ALLOWED_HOSTS alone decides, as before).
import { prisma } from '../db/client.js';
import type { Environment } from '../generated/prisma/client.js';

/** An environment's stored network settings (validated at save time; the contract's EnvironmentNetwork). */
export function networkOf(row: Pick<Environment, 'network'>): { allowed_hosts: string[] } {
  const n = (row.network ?? {}) as { allowed_hosts?: string[] };
  return { allowed_hosts: n.allowed_hosts ?? [] };
}

export async function environmentAllowList(sessionId: string): Promise<string[] | null> {
  const session = await prisma.session.findUnique({ where: { id: sessionId }, select: { environment: { select: { network: true } } } });
  return session?.environment ? networkOf(session.environment).allowed_hosts : null;
}
