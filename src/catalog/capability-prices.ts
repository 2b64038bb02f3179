// Capability list prices (capabilities.json): what one call costs from the units the vendor's
// answer reports (requests, pages, images by quality and size, seconds of video, minutes of
// audio), in nano-dollars, and what the wallet holds before the call. Checked once at load.
import { createRequire } from 'node:module';
import { CAPABILITY_IDS } from './capability-ids.js';

const require = createRequire(import.meta.url);

interface Entry {
  vendor: string;
  prices: Record<string, number>;
  hold: Record<string, number>;
}
const data = require('./capabilities.json') as { capabilities: Record<string, Entry> };

for (const id of CAPABILITY_IDS) {
  const e = data.capabilities[id];
  if (!e) throw new Error(`capabilities.json: no prices for ${id}`);
  for (const [unit, usd] of Object.entries(e.prices))
    if (!(typeof usd === 'number' && usd >= 0)) throw new Error(`capabilities.json: ${id} ${unit} needs a price >= 0`);
  for (const unit of Object.keys(e.hold)) if (!(unit in e.prices)) throw new Error(`capabilities.json: ${id} holds an unpriced unit ${unit}`);
}

const nanoOf = (usd: number) => BigInt(Math.round(usd * 1e9));

/** The cost of `units` at `capability`'s list prices; a unit without a price is an error (a catalog gap). */
export function capabilityCostNano(capability: string, units: Record<string, number>): bigint {
  const e = data.capabilities[capability]!;
  let total = 0n;
  for (const [unit, count] of Object.entries(units)) {
    if (!count) continue;
    const price = e.prices[unit];
    if (price === undefined) throw new Error(`capabilities.json: ${capability} has no price for ${unit}`);
    total += nanoOf(price) * BigInt(Math.ceil(count));
  }
  return total;
}

/** What the wallet reserves before a call of `capability` (its worst case). */
export function capabilityHoldNano(capability: string): bigint {
  return capabilityCostNano(capability, data.capabilities[capability]!.hold);
}

export function capabilityVendor(capability: string): string {
  return data.capabilities[capability]!.vendor;
}
