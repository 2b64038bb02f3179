// The vaults a new session lists: each must be a vault of the universe (404 not_found), and no two
// of the session's header rules (its vaults' credentials, the agent's egress secrets, its
// repository tokens) may set one header on one host to different values (egress_header_conflict).
import { AppError } from '../errors.js';
import { checkConflicts, EgressHeaderConflictError, hostKeyOfUrl, type HeaderRule } from '../egress/policy.js';
import { repositoryRule } from '../egress/declarations.js';
import { agentSecretRules } from '../egress/session-policy.js';
import { parseRepoUrl } from '../resources/rules.js';
import type { ResourceInput } from '../resources/contract.js';
import { vaultRules } from '../egress/vault-rules.js';
import { checkVaultIds } from './vaults.js';

/**
 * The distinct vault ids to store on the session; throws not_found or egress_header_conflict.
 * Runs before the resources are planned (nothing copied or checked over the network yet).
 */
export async function vaultsForNewSession(universeId: string, vaultIds: string[], agentId: string, resources: ResourceInput[]): Promise<string[]> {
  const { ids, missing } = await checkVaultIds(universeId, vaultIds);
  if (missing) throw new AppError('not_found', `vault ${missing} not found`);
  // Checked with no vault too: the agent's secrets may conflict among themselves (stored before
  // their PUT refused conflicts) or with the repository tokens.
  const rules: HeaderRule[] = [];
  resources.forEach((r, i) => {
    if (r.type === 'github_repository' && r.authorization_token)
      rules.push(repositoryRule(`resources[${i}]`, hostKeyOfUrl(parseRepoUrl(r.url).url), r.authorization_token));
  });
  rules.push(...(await agentSecretRules(agentId)), ...(await vaultRules(ids)));
  try {
    checkConflicts(rules);
  } catch (err) {
    if (err instanceof EgressHeaderConflictError) throw new AppError('egress_header_conflict', err.message);
    throw err;
  }
  return ids;
}
