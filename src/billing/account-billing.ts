// modelBilling `account` needs the universe's subscription for the session's model provider, in
// status connected: without it every turn would fail (subscription_missing), so choosing it is
// refused up front with 422 invalid_spec (a domain rule, like a model the engine does not run).
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { modelProvider } from '../gateway/models.js';

export async function assertAccountBillable(universeId: string, llm: string): Promise<void> {
  const provider = modelProvider(llm);
  if (provider === 'demo') return; // the demo model calls no provider: its turns bill nothing on either mode
  const sub = await prisma.modelSubscription.findUnique({ where: { universeId_provider: { universeId, provider } }, select: { status: true } });
  if (!sub)
    throw new AppError(
      'invalid_spec',
      `modelBilling account needs a connected ${provider} subscription for ${llm}; connect one (PUT /v1/model-subscriptions/${provider}) or use modelBilling platform`,
    );
  if (sub.status !== 'connected')
    throw new AppError(
      'invalid_spec',
      `modelBilling account: the ${provider} subscription needs to be reconnected (PUT /v1/model-subscriptions/${provider}) before sessions can bill to it`,
    );
}
