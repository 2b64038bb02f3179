// Billing: the model catalog with list prices, the universe wallet and its ledger, credit
// grants (owner only) and model subscriptions. The catalog, wallet and ledger are GraphQL-only.
import { builder } from './builder.js';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { ENGINE_NAMES, defaultModel, engineModels } from '../catalog/catalog.js';
import { nanoToCents } from '../money.js';
import { grant } from '../billing/wallet.js';
import {
  listSubscriptions,
  putSubscription,
  patchSubscription,
  deleteSubscription,
  getSubscription,
  subscriptionView,
  subscriptionViews,
} from '../billing/subscriptions.js';
import { modelSubscriptionBody, patchSubscriptionBody, putSubscriptionBody } from '../billing/contract.js';
import { inputOf, objectOf } from './graphql-types.js';
import { takeInput } from './input.js';

const CatalogModel = builder.simpleObject('CatalogModel', {
  description: 'A current model with its list prices in USD per million tokens',
  fields: (t) => ({
    id: t.string(),
    provider: t.string({ description: 'anthropic, openai, or demo (the built-in demo model: no provider, no key, no cost)' }),
    aliases: t.stringList(),
    description: t.string({ nullable: true, description: 'What is special about the model, e.g. that it is the demo model' }),
    inputPerMillion: t.float(),
    outputPerMillion: t.float(),
    cacheReadPerMillion: t.float(),
    cacheWritePerMillion: t.float(),
  }),
});
const Engine = builder.simpleObject('Engine', {
  fields: (t) => ({ agentType: t.string(), defaultModel: t.string(), models: t.field({ type: [CatalogModel] }) }),
});

builder.queryField('engines', (t) =>
  t.field({
    type: [Engine],
    description: 'Each engine (agentType) with its current models and list prices: the catalog llm values are checked against',
    authScopes: { read: true },
    resolve: () =>
      ENGINE_NAMES.map((agentType) => ({
        agentType,
        defaultModel: defaultModel(agentType),
        models: engineModels(agentType).map((m) => ({
          id: m.id,
          provider: m.provider,
          aliases: m.aliases,
          description: m.description ?? null,
          inputPerMillion: m.prices.input,
          outputPerMillion: m.prices.output,
          cacheReadPerMillion: m.prices.cache_read,
          cacheWritePerMillion: m.prices.cache_write,
        })),
      })),
  }),
);

const Money = builder.simpleObject('WalletAmount', { fields: (t) => ({ amount: t.string({ description: 'Whole US cents' }), currency: t.string() }) });
const usd = (nano: bigint) => ({ amount: nanoToCents(nano).toString(), currency: 'USD' });

builder.prismaObject('WalletEntry', {
  fields: (t) => ({
    id: t.exposeID('id'),
    kind: t.exposeString('kind', { description: 'grant or charge' }),
    amount: t.field({ type: Money, description: 'Signed, whole cents rounded toward the lower value', resolve: (e) => usd(e.amountNanoUsd) }),
    amountNanoUsd: t.string({ description: 'Exact amount in 1e-9 USD', resolve: (e) => e.amountNanoUsd.toString() }),
    sessionId: t.exposeString('sessionId', { nullable: true }),
    note: t.exposeString('note', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const Wallet = builder.simpleObject('Wallet', {
  fields: (t) => ({
    universe: t.string(),
    balance: t.field({ type: Money }),
    held: t.field({ type: Money, description: 'Reserved by model calls in flight' }),
  }),
});

async function walletOf(universeId: string) {
  const u = await prisma.universe.findUniqueOrThrow({ where: { id: universeId } });
  return { universe: u.slug, balance: usd(u.balanceNanoUsd), held: usd(u.heldNanoUsd) };
}

builder.queryField('wallet', (t) => t.field({ type: Wallet, authScopes: { read: true }, resolve: (_r, _a, ctx) => walletOf(ctx.viewer!.universe.id) }));

builder.queryField('walletEntries', (t) =>
  t.prismaConnection({
    type: 'WalletEntry',
    cursor: 'id',
    description: 'The ledger of the acting universe, newest first',
    authScopes: { read: true },
    resolve: (query, _r, _a, ctx) => prisma.walletEntry.findMany({ ...query, where: { universeId: ctx.viewer!.universe.id }, orderBy: { id: 'desc' } }),
  }),
);

builder.mutationField('grantCredits', (t) =>
  t.field({
    type: Wallet,
    description: 'Owner only: adds credits (whole cents) to a universe',
    args: { universe: t.arg.string({ required: true }), amountCents: t.arg.string({ required: true }), note: t.arg.string() },
    authScopes: { $all: { owner: true, admin: true } },
    resolve: async (_r, args, ctx) => {
      if (!/^[0-9]{1,15}$/.test(args.amountCents) || BigInt(args.amountCents) === 0n)
        throw new AppError('invalid_request', 'amountCents must be 1 to 15 digits, above zero');
      const u = await prisma.universe.findUnique({ where: { slug: args.universe } });
      // A universe-scoped token acts in its universe only (spec, authentication 4 and 5).
      const scopedTo = ctx.viewer!.tokenUniverseId;
      if (scopedTo && u?.id !== scopedTo) throw new AppError('universe_mismatch', "the universe conflicts with the token's universe");
      if (!u) throw new AppError('not_found', `universe ${args.universe} not found`);
      await grant(u.id, BigInt(args.amountCents), args.note ?? null);
      return walletOf(u.id);
    },
  }),
);

// ---- model subscriptions (inputs and outputs derived from src/billing/contract.ts) ----

const ModelSubscriptionType = objectOf(modelSubscriptionBody);

builder.queryField('modelSubscriptions', (t) =>
  t.field({
    type: [ModelSubscriptionType],
    authScopes: { read: true },
    resolve: async (_r, _a, ctx) => subscriptionViews(ctx.viewer!.universe.id, await listSubscriptions(ctx.viewer!)),
  }),
);

builder.queryField('modelSubscription', (t) =>
  t.field({
    type: ModelSubscriptionType,
    args: { provider: t.arg.string({ required: true }) },
    authScopes: { read: true },
    resolve: async (_r, { provider }, ctx) => subscriptionView(await getSubscription(ctx.viewer!, provider)),
  }),
);

builder.mutationField('putModelSubscription', (t) =>
  t.field({
    type: ModelSubscriptionType,
    description: 'Connect (or replace) a subscription; the credential is write-only',
    args: { provider: t.arg.string({ required: true }), input: t.arg({ type: inputOf(putSubscriptionBody, 'PutModelSubscription'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { provider, input }, ctx) => subscriptionView(await putSubscription(ctx.viewer!, provider, takeInput(ctx, putSubscriptionBody, input))),
  }),
);

builder.mutationField('updateModelSubscription', (t) =>
  t.field({
    type: ModelSubscriptionType,
    description: 'Change label or useForNewAgents',
    args: { provider: t.arg.string({ required: true }), input: t.arg({ type: inputOf(patchSubscriptionBody, 'UpdateModelSubscription'), required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { provider, input }, ctx) =>
      subscriptionView(await patchSubscription(ctx.viewer!, provider, takeInput(ctx, patchSubscriptionBody, input))),
  }),
);

builder.mutationField('deleteModelSubscription', (t) =>
  t.boolean({
    args: { provider: t.arg.string({ required: true }) },
    authScopes: { write: true },
    resolve: async (_r, { provider }, ctx) => {
      await deleteSubscription(ctx.viewer!, provider);
      return true;
    },
  }),
);
