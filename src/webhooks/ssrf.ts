// Kept for existing importers (message `url` sources): the rules now live in the one outbound
// guard, src/net/outbound-guard.ts. New code imports that module (and fetches with guardedFetch,
// which also pins the checked address for the connection).
import { checkOutboundUrl, urlShapeRefusal } from '../net/outbound-guard.js';

/** A reason the URL is refused by its shape or literal address, or null. */
export function checkUrlShape(raw: string): string | null {
  return urlShapeRefusal(raw);
}

/** Resolves the host and refuses it when any address is internal (null when allowed). */
export async function checkResolvedHost(raw: string): Promise<string | null> {
  return checkOutboundUrl(raw);
}
