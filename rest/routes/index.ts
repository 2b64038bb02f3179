// The whole /v1 route table.
import type { RestRoute } from '../route.js';
import { identityRoutes } from './identity.js';
import { agentRoutes } from './agents.js';
import { sessionRoutes, sessionResourceRoutes, sessionOutcomeRoutes } from './sessions.js';
import { skillRoutes } from './skills.js';
import { modelSubscriptionRoutes } from './model-subscriptions.js';
import { routineRoutes } from './routines.js';
import { webhookRoutes } from './webhooks.js';
import { fileRoutes } from './files.js';
import { channelRoutes } from './channels.js';
import { toolPolicyRoutes } from './tool-policy.js';
import { vaultRoutes } from './vaults.js';
import { environmentRoutes } from './environments.js';
import { memoryStoreRoutes } from './memory-stores.js';

export const routes: RestRoute[] = [
  ...identityRoutes,
  ...agentRoutes,
  ...sessionRoutes,
  ...modelSubscriptionRoutes,
  ...routineRoutes,
  ...webhookRoutes,
  ...fileRoutes,
  ...sessionResourceRoutes,
  ...sessionOutcomeRoutes,
  ...skillRoutes,
  ...channelRoutes,
  ...toolPolicyRoutes,
  ...environmentRoutes,
  ...vaultRoutes,
  ...memoryStoreRoutes,
];
