// The network allow-list a session's environment gives its egress policy: its `allowed_hosts`
// (empty: nothing but the model gateway, which is not a proxied destination), or null when the
// session has no environment (the deployment's EGRESS_ALLOWED_HOSTS alone decides, as before).
import { prisma } from '../db/client.js';
import { networkOf } from './view.js';

export async function environmentAllowList(sessionId: string): Promise<string[] | null> {
  const session = await prisma.session.findUnique({ where: { id: sessionId }, select: { environment: { select: { network: true } } } });
  return session?.environment ? networkOf(session.environment).allowed_hosts : null;
}
