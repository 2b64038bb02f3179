// Who is signed in and the universes they can act in (the dashboard's header and settings).
import { doc } from '../../shared/graphql.js';

export interface Universe {
  slug: string;
  name: string;
  isPersonal: boolean;
}
export interface Me {
  whoami: { user: { email: string }; universe: Universe };
  universes: Universe[];
}

export const ME = doc`query Me { whoami { user { email } universe { slug name isPersonal } } universes { slug name isPersonal } }`;
