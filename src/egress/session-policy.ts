// Each session's egress policy, compiled from the database (repository tokens, the agent's
// secrets that declare a host, the session's vault credentials) and kept per process. A change
// (token rotation, a vault credential written or deleted) is pushed to every process through
// pub/sub, so the next request through any of them uses the new policy; nothing inside the
// sandbox changes.
import { prisma } from '../db/client.js';
import { open } from '../crypto/secret-box.js';
import { pubsub, type PubSub } from '../events/pubsub.js';
import { logger } from '../logger.js';
import { checkConflicts, compilePolicy, EgressHeaderConflictError, hostKeyOfUrl, type EgressPolicy, type HeaderRule } from './policy.js';
import { repositoryRule, secretRules } from './declarations.js';
import { loadEgressSettings } from './settings.js';
import { environmentAllowList } from './environment-allow-list.js';
import { vaultRules, type CredentialOverride } from './vault-rules.js';

const CHANNEL = 'egress-policy';
const TTL_MS = 60_000;

/**
 * The header rules of a session (repository tokens, the agent's egress secrets, its vaults'
 * credentials); `tokenOverride` replaces one repository's token (a rotation being checked),
 * `credentialOverride` one vault credential (a PUT being checked).
 */
export async function sessionRules(
  sessionId: string,
  tokenOverride?: { resourceId: string; token: string },
  credentialOverride?: CredentialOverride,
  secretOverride?: SecretOverride,
): Promise<HeaderRule[]> {
  const session = await prisma.session.findUnique({ where: { id: sessionId }, select: { agentId: true, vaultIds: true } });
  const repos = await prisma.sessionResource.findMany({ where: { sessionId, type: 'github_repository' }, orderBy: { createdAt: 'asc' } });
  const rules: HeaderRule[] = [];
  for (const r of repos) {
    const token = tokenOverride?.resourceId === r.id ? tokenOverride.token : r.tokenSealed ? open(r.tokenSealed) : null;
    if (token && r.url) rules.push(repositoryRule(r.id, hostKeyOfUrl(r.url), token));
  }
  if (session?.agentId) rules.push(...(await agentSecretRules(session.agentId, secretOverride)));
  if (session?.vaultIds.length) rules.push(...(await vaultRules(session.vaultIds, credentialOverride)));
  return rules;
}

/** An agent secret being written (checked before it is stored): replaces or adds `key` of `agentId`. */
export interface SecretOverride {
  agentId: string;
  key: string;
  description: string;
  value: string;
}

/** Rules the agent's secrets declare (secrets whose description has `egress:` lines), with `override` applied. */
export async function agentSecretRules(agentId: string, override?: SecretOverride): Promise<HeaderRule[]> {
  const secrets = await prisma.agentSecret.findMany({ where: { agentId, description: { contains: 'egress:', mode: 'insensitive' } }, orderBy: { key: 'asc' } });
  const mine = override?.agentId === agentId ? override : undefined;
  const rules = secrets.filter((s) => s.key !== mine?.key).flatMap((s) => secretRules(s.key, s.description, open(s.ciphertext)));
  if (mine) rules.push(...secretRules(mine.key, mine.description, mine.value));
  return rules;
}

/**
 * Throws EgressHeaderConflictError when writing the secret would make two of the agent's secrets
 * set one header on one host to different values, or would conflict, for a live session of the
 * agent, with its repository tokens or vault credentials (the spec's egress_header_conflict;
 * the same rule a vault credential's PUT follows). Returns those live sessions (to republish).
 */
export async function checkSecretChange(override: SecretOverride): Promise<string[]> {
  checkConflicts(await agentSecretRules(override.agentId, override));
  const live = await prisma.session.findMany({ where: { agentId: override.agentId, status: { not: 'terminated' } }, select: { id: true } });
  for (const s of live) checkConflicts(await sessionRules(s.id, undefined, undefined, override));
  return live.map((s) => s.id);
}

/** Throws EgressHeaderConflictError when the rules conflict. */
export function assertNoConflict(rules: HeaderRule[]): void {
  checkConflicts(rules);
}

type Cached = { at: number; policy: Promise<EgressPolicy> };
const cache = new Map<string, Cached>();
let subscribedTo: PubSub | null = null;

function listen(): void {
  const bus = pubsub();
  if (subscribedTo === bus) return;
  subscribedTo = bus;
  cache.clear();
  void bus
    .subscribe(CHANNEL, (sessionId) => cache.delete(sessionId))
    .catch((err) => {
      subscribedTo = null;
      logger.warn({ err }, 'egress policy updates: subscription failed');
    });
}

/**
 * The session's compiled policy. A policy that no longer compiles (two credentials now
 * conflict) rejects with EgressHeaderConflictError; the proxy refuses the request with it.
 */
export function sessionPolicy(sessionId: string): Promise<EgressPolicy> {
  listen();
  const hit = cache.get(sessionId);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.policy;
  // The session environment's allow-list narrows the deployment's (patching it republishes, environments.ts).
  const policy = Promise.all([sessionRules(sessionId), environmentAllowList(sessionId)]).then(([rules, environmentHosts]) =>
    compilePolicy(sessionId, loadEgressSettings().allowedHosts, rules, environmentHosts),
  );
  policy.catch(() => cache.delete(sessionId));
  if (cache.size > 10_000) cache.clear();
  cache.set(sessionId, { at: Date.now(), policy });
  return policy;
}

/** Every process drops its copy of the session's policy; the next request compiles the new one. */
export async function publishPolicyChange(sessionId: string): Promise<void> {
  cache.delete(sessionId);
  await pubsub().publish(CHANNEL, sessionId);
}

export { EgressHeaderConflictError };
