// Billing: the model catalog with list prices, the universe wallet and its ledger, credit
// grants (owner only) and model subscriptions.
import { builder } from './builder.js';
import { prisma } from '../db/client.js';
import { AppError } from '../errors.js';
import { ENGINE_NAMES, defaultModel, engineModels } from '../catalog/catalog.js';
import { nanoToCents } from '../billing/money.js';
import { grant } from '../billing/wallet.js';
import { listSubscriptions, putSubscription, patchSubscription, deleteSubscription, getSubscription } from '../billing/subscriptions.js';
import { modelProvider } from '../runtime/models.js';

const CatalogModel = builder.simpleObject('CatalogModel', {
  description: 'A current model with its list prices in USD per million tokens',
  fields: (t) => ({
    id: t.string(), provider: t.string(), aliases: t.stringList(),
    inputPerMillion: t.float(), outputPerMillion: t.float(), cacheReadPerMillion: t.float(), cacheWritePerMillion: t.float(),
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
    resolve: () => ENGINE_NAMES.map((agentType) => ({
      agentType,
      defaultModel: defaultModel(agentType),
      models: engineModels(agentType).map((m) => ({
        id: m.id, provider: m.provider, aliases: m.aliases,
        inputPerMillion: m.prices.input, outputPerMillion: m.prices.output, cacheReadPerMillion: m.prices.cache_read, cacheWritePerMillion: m.prices.cache_write,
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
  fields: (t) => ({ universe: t.string(), balance: t.field({ type: Money }), held: t.field({ type: Money, description: 'Reserved by model calls in flight' }) }),
});

async function walletOf(universeId: string) {
  const u = await prisma.universe.findUniqueOrThrow({ where: { id: universeId } });
  return { universe: u.slug, balance: usd(u.balanceNanoUsd), held: usd(u.heldNanoUsd) };
}

builder.queryField('wallet', (t) =>
  t.field({ type: Wallet, authScopes: { read: true }, resolve: (_r, _a, ctx) => walletOf(ctx.viewer!.universe.id) }),
);

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
    resolve: async (_r, args) => {
      if (!/^[0-9]{1,15}$/.test(args.amountCents) || BigInt(args.amountCents) === 0n) throw new AppError('invalid_request', 'amountCents must be 1 to 15 digits, above zero');
      const u = await prisma.universe.findUnique({ where: { slug: args.universe } });
      if (!u) throw new AppError('not_found', `universe ${args.universe} not found`);
      await grant(u.id, BigInt(args.amountCents), args.note ?? null);
      return walletOf(u.id);
    },
  }),
);

// ---- model subscriptions ----

const SubscriptionAgent = builder.simpleObject('ModelSubscriptionAgent', {
  fields: (t) => ({ id: t.string({ description: 'session id' }), agentId: t.string({ nullable: true }), name: t.string() }),
});

export const ModelSubscriptionType = builder.prismaObject('ModelSubscription', {
  fields: (t) => ({
    provider: t.exposeString('provider'),
    label: t.exposeString('label', { nullable: true }),
    status: t.exposeString('status', { description: 'connected or needs_reconnect' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
    useForNewAgents: t.exposeBoolean('useForNewAgents'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    agents: t.field({
      type: [SubscriptionAgent],
      description: 'Sessions of the universe running on it (account billing with this provider\'s models)',
      resolve: async (sub) => {
        const sessions = await prisma.session.findMany({
          where: { universeId: sub.universeId, modelBilling: 'account', status: { not: 'terminated' } },
          select: { id: true, agentId: true, llm: true, title: true, agent: { select: { name: true } } },
          orderBy: { id: 'asc' },
        });
        return sessions.filter((s) => modelProvider(s.llm) === sub.provider).map((s) => ({ id: s.id, agentId: s.agentId, name: s.agent?.name ?? s.title ?? s.id }));
      },
    }),
  }),
});

builder.queryField('modelSubscriptions', (t) =>
  t.prismaField({ type: ['ModelSubscription'], authScopes: { read: true }, resolve: (_q, _r, _a, ctx) => listSubscriptions(ctx.viewer!) }),
);

builder.queryField('modelSubscription', (t) =>
  t.prismaField({ type: 'ModelSubscription', args: { provider: t.arg.string({ required: true }) }, authScopes: { read: true }, resolve: (_q, _r, { provider }, ctx) => getSubscription(ctx.viewer!, provider) }),
);

builder.mutationField('putModelSubscription', (t) =>
  t.prismaField({
    type: 'ModelSubscription',
    description: 'Connect (or replace) a subscription; the credential is write-only',
    args: { provider: t.arg.string({ required: true }), credential: t.arg.string({ required: true }), label: t.arg.string() },
    authScopes: { write: true },
    resolve: (_q, _r, args, ctx) => putSubscription(ctx.viewer!, args.provider, { credential: args.credential, ...(args.label != null ? { label: args.label } : {}) }),
  }),
);

builder.mutationField('updateModelSubscription', (t) =>
  t.prismaField({
    type: 'ModelSubscription',
    args: { provider: t.arg.string({ required: true }), input: t.arg({ type: 'JSONObject', required: true }) },
    authScopes: { write: true },
    resolve: (_q, _r, args, ctx) => patchSubscription(ctx.viewer!, args.provider, args.input),
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
