// The whole /v1 route table.
import type { RestRoute } from '../route.js';
import { identityRoutes } from './identity.js';

export const routes: RestRoute[] = [...identityRoutes];
