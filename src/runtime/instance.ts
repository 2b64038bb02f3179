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
import os from 'node:os';
import { ulid } from 'ulid';

const BOOT = ulid();
let instance = `proc-${BOOT}`;
let stable = false;

/** Sets the instance part from INSTANCE_ID or the listen address (call before taking claims). */
export function configureInstance(listen: { host: string; port: number }): void {
  const explicit = process.env.INSTANCE_ID?.trim();
  if (explicit) {
    instance = explicit;
    stable = true;
  } else if (listen.port > 0) {
    instance = `${os.hostname()}:${listen.host}:${listen.port}`;
    stable = true;
  } else {
    instance = `proc-${BOOT}`;
    stable = false;
  }
}

/** The owner value written on claims and leases. */
export function ownerId(): string {
  return `${instance}#${BOOT}`;
}

/** The prefix shared by every life of this instance, or null when the identity is random. */
export function previousLivesPrefix(): string | null {
  return stable ? `${instance}#` : null;
}
