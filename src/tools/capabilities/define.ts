// The shape of one platform capability: its id, the tool name the model sees, the vendor it
// calls, its arguments (a zod schema, also the tool's JSON Schema) and the adapter that speaks
// the vendor's wire format and reports the billable units of the answer.
import { settings } from '../../config.js';
import { z } from 'zod';
import type { CapabilityId } from '../../catalog/capability-ids.js';
import type { ProducedFile } from '../result-files.js';
import type { MediaScope } from './media.js';
import type { VendorAccess, VendorName } from './vendors.js';

export interface CapabilityContext extends MediaScope {
  access: VendorAccess;
}

export interface CapabilityOutput {
  /** What the model reads. */
  result: Record<string, unknown>;
  /** Files the call produced (stored as session files). */
  files?: ProducedFile[];
  /** Billable units counted from the vendor's answer (priced by src/catalog/capabilities.json). */
  units: Record<string, number>;
}

export interface CapabilityDef {
  id: CapabilityId;
  tool: string;
  vendor: VendorName;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Validates the model's arguments; an error message when they do not fit. */
  parse(args: unknown): { ok: true; value: unknown } | { ok: false; error: string };
  run(args: unknown, ctx: CapabilityContext): Promise<CapabilityOutput>;
}

export function defineCapability<A extends z.ZodType>(def: {
  id: CapabilityId;
  vendor: VendorName;
  description: string;
  args: A;
  run(args: z.output<A>, ctx: CapabilityContext): Promise<CapabilityOutput>;
}): CapabilityDef {
  const { $schema: _drop, ...schema } = z.toJSONSchema(def.args, { io: 'input' }) as Record<string, unknown>;
  return {
    id: def.id,
    // `exa.search` → `exa_search`: provider tool names allow letters, digits, `_` and `-`.
    tool: def.id.replace(/\./g, '_'),
    vendor: def.vendor,
    description: def.description,
    inputSchema: schema,
    parse(args) {
      const parsed = def.args.safeParse(args);
      return parsed.success ? { ok: true, value: parsed.data } : { ok: false, error: z.prettifyError(parsed.error) };
    },
    run: (args, ctx) => def.run(args as z.output<A>, ctx),
  };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/** Polls `check` until it returns a value, the time is up, or the turn is interrupted. */
export async function pollUntil<T>(check: () => Promise<T | null>, signal: AbortSignal, what: string): Promise<T> {
  const every = settings.capabilityPollMs();
  const deadline = Date.now() + settings.capabilityTaskTimeoutMs();
  for (;;) {
    const done = await check();
    if (done !== null) return done;
    if (signal.aborted) throw new Error('interrupted');
    if (Date.now() > deadline) throw new Error(`${what} did not finish in time`);
    await sleep(every, signal);
  }
}

/** A call that failed after the vendor did billable work (a browser run that ended FAILED). */
export class ChargedFailure extends Error {
  constructor(
    message: string,
    readonly units: Record<string, number>,
  ) {
    super(message);
    this.name = 'ChargedFailure';
  }
}
