// This process's identity on the claims it takes (a session's turn, a webhook delivery's
// lease): `<instance>#<boot>`. The instance part is the same across restarts, so a restarted
// process recognises what its previous life held and releases it at once instead of waiting
// for a heartbeat or lease to time out; the boot part tells this life from the previous one.
//
// The instance part must never be shared by two live processes. It is INSTANCE_ID when set
// (the operator's promise), otherwise `<hostname>:<listen host>:<port>` for a fixed port: the
// listening socket proves no other live process on this host holds it, so the own-claims
// recovery runs only after `listen` succeeded. With PORT=0 the identity is random (no restart
// shortcut; other processes recover those claims after the timeout, as before).
import { environment } from '../config.js';
import os from 'node:os';
import { ulid } from 'ulid';
import { service } from './registry.js';

/** This process's identity on its claims: a composed part (`instance`), made by instanceIdentity at start. */
export interface InstanceIdentity {
  /** The instance part (INSTANCE_ID, `<hostname>:<host>:<port>`, or `proc-<boot>`). */
  readonly instance: string;
  /** Whether the instance part outlives this process (not random). */
  readonly stable: boolean;
}

declare module '../services/registry.js' {
  interface Services {
    instance: InstanceIdentity;
  }
}

const BOOT = ulid();

/** The instance part from INSTANCE_ID or the listen address. */
export function instanceIdentity(listen: { host: string; port: number }, env: NodeJS.ProcessEnv = environment()): InstanceIdentity {
  const explicit = env.INSTANCE_ID?.trim();
  if (explicit) return { instance: explicit, stable: true };
  if (listen.port > 0) return { instance: `${os.hostname()}:${listen.host}:${listen.port}`, stable: true };
  return { instance: `proc-${BOOT}`, stable: false };
}

/** The owner value an identity writes on claims and leases. */
export const ownerIdOf = (identity: InstanceIdentity): string => `${identity.instance}#${BOOT}`;

/** The owner value written on claims and leases (the composed identity's). */
export function ownerId(): string {
  return ownerIdOf(service('instance'));
}

/** The prefix shared by every life of this instance, or null when the identity is random. */
export function previousLivesPrefix(): string | null {
  const { instance, stable } = service('instance');
  return stable ? `${instance}#` : null;
}
