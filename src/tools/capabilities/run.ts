// The ten platform capabilities as tools: offered exactly as granted, checked against the
// agent's current grant at call time, refused clearly without the vendor's key, metered like
// model usage, and their produced files stored as session files.
import type { ToolSpec } from '../../gateway/types.js';
import type { CapabilityId } from '../../catalog/capability-ids.js';
import { CapabilityRefused, chargeCapability, reserveCapability } from '../../billing/capability-usage.js';
import { storeToolFiles } from '../result-files.js';
import type { ToolOutcome } from '../types.js';
import { ChargedFailure, type CapabilityDef } from './define.js';
import type { MediaScope } from './media.js';
import { vendorAccess, VendorError } from './vendors.js';
import { exaContents, exaSearch } from './exa.js';
import { tinyfishBrowser, tinyfishFetch } from './tinyfish.js';
import { dataforseoSerp } from './dataforseo.js';
import { gptImageGenerate } from './openai-images.js';
import { rembgRemoveBackground } from './rembg.js';
import { seedanceGenerate } from './seedance.js';
import { minimaxImageToVideo } from './minimax.js';
import { fishAudioTranscribe } from './fish-audio.js';

export const CAPABILITIES: CapabilityDef[] = [
  exaSearch,
  exaContents,
  tinyfishFetch,
  tinyfishBrowser,
  dataforseoSerp,
  gptImageGenerate,
  rembgRemoveBackground,
  seedanceGenerate,
  minimaxImageToVideo,
  fishAudioTranscribe,
];
const byTool = new Map(CAPABILITIES.map((c) => [c.tool, c]));
const byId = new Map<string, CapabilityDef>(CAPABILITIES.map((c) => [c.id, c]));

/** The tool specs of the granted capabilities, in the catalog's order. */
export function capabilitySpecs(granted: readonly string[]): ToolSpec[] {
  return CAPABILITIES.filter((c) => granted.includes(c.id)).map((c) => ({ name: c.tool, description: c.description, inputSchema: c.inputSchema }));
}

export function capabilityForTool(name: string): CapabilityDef | undefined {
  return byTool.get(name);
}

export function capabilityById(id: CapabilityId): CapabilityDef {
  return byId.get(id)!;
}

export interface CapabilityCallScope extends Omit<MediaScope, 'signal'> {
  turn: number;
  /** The agent's capabilities at the moment of the call. */
  granted: readonly string[];
  signal: AbortSignal;
}

const fail = (error: string, extra: Record<string, unknown> = {}): ToolOutcome => ({ status: 'error', result: { error, ...extra } });

export async function runCapability(def: CapabilityDef, input: unknown, scope: CapabilityCallScope): Promise<ToolOutcome> {
  if (!scope.granted.includes(def.id)) return fail(`the capability ${def.id} is not granted to this agent (it may have been revoked)`, { capability: def.id });
  const args = def.parse(input);
  if (!args.ok) return fail(`invalid arguments for ${def.tool}: ${args.error}`);
  const access = vendorAccess(def.vendor);
  if ('missing' in access) return fail(`${def.id} is unavailable: ${access.missing}`, { capability: def.id });

  let held: bigint;
  try {
    held = await reserveCapability(scope, def.id);
  } catch (err) {
    if (err instanceof CapabilityRefused) return fail(`${def.id} was not run: ${err.message}`, { code: err.code });
    throw err;
  }
  try {
    const out = await def.run(args.value, { ...scope, access });
    await chargeCapability(scope, def.id, held, out.units);
    const stored = out.files?.length ? await storeToolFiles(scope, out.files) : null;
    const result = { ...out.result, ...(stored ? { files: stored.refs } : {}) };
    return { status: 'ok', result, ...(stored ? { attachments: stored.parts } : {}) };
  } catch (err) {
    await chargeCapability(scope, def.id, held, err instanceof ChargedFailure ? err.units : null);
    if (scope.signal.aborted) return fail('interrupted');
    if (err instanceof VendorError || err instanceof ChargedFailure) return fail(`${def.id}: ${err.message}`);
    return fail(`${def.id} failed: ${(err as Error).message}`);
  }
}
