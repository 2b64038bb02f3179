// The process's services — config, pub/sub, turn queue, sandboxes, blob store, routine
// scheduler, egress CA, model gateway handler, listen address, DNS resolver — held as ONE
// object, installed at start-up by composeServices (src/composition/compose.ts) and read through
// each part's own accessor (`config()`, `pubsub()`, `blobStore()`…). Nothing else installs them:
// there is no per-module setter.
//
// This module imports nothing, so every module may read from it without an import cycle (the
// layering test counts type imports too). Each part's module declares its own slot in
// `Services` next to its type, by module augmentation:
//
//   declare module '../services/registry.js' { interface Services { pubsub: PubSub } }
//
// and src/composition/compose.ts builds the whole object in one function, type-checked as `Services`.
//
// Per process: the last installed composition is in force (tests start one server per process
// at a time; a second start replaces the first's, as the old setters did). Ending a composition
// puts back the one it replaced (the standalone set a test process installs, or nothing).

/** The composed parts, one slot per part (declared by the parts' modules, see above). */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging (each part's `declare module`); a type alias could not be augmented
export interface Services {}

export class ServiceNotComposedError extends Error {
  constructor(readonly service: string) {
    super(`service not composed: ${service}`);
    this.name = 'ServiceNotComposedError';
  }
}

/** One installed set of parts; `end()` takes it out of force (idempotent). */
export interface Composition {
  readonly parts: Readonly<Partial<Services>>;
  readonly ended: boolean;
  end(): void;
}

interface Installed {
  parts: Partial<Services>;
  ended: boolean;
  previous: Installed | null;
}

let current: Installed | null = null;

/** The composed `name`; throws ServiceNotComposedError when the composition in force lacks it. */
export function service<K extends keyof Services>(name: K): Services[K] {
  const parts = current?.parts;
  if (!parts || !(name in parts)) throw new ServiceNotComposedError(String(name));
  return parts[name] as Services[K];
}

/** Whether `name` is composed (for code that has a documented fallback, e.g. the listen address). */
export function composed(name: keyof Services): boolean {
  return !!current && name in current.parts;
}

/**
 * Puts `parts` in force for the whole process, replacing the composition in force until the
 * returned handle ends. startServer calls it once, through composeServices, with every part;
 * a test process installs the standalone set (src/composition/standalone.ts) the same way.
 */
export function installServices(parts: Partial<Services>): Composition {
  const installed: Installed = { parts: { ...parts }, ended: false, previous: current };
  current = installed;
  return {
    get parts() {
      return installed.parts;
    },
    get ended() {
      return installed.ended;
    },
    end() {
      if (installed.ended) return;
      installed.ended = true;
      // Back to the newest composition still in force under this one (a composition that was
      // ended while a later one was in force is skipped).
      while (current && current.ended) current = current.previous;
    },
  };
}

/**
 * Replaces some parts of the composition in force (tests and benchmarks: a fake DNS resolver,
 * another platform origin in the config). The composition stays the same one: its `end()`
 * still takes the replaced parts out of force.
 */
export function overrideServices(parts: Partial<Services>): void {
  if (!current) throw new ServiceNotComposedError(Object.keys(parts).join(', ') || 'services');
  current.parts = { ...current.parts, ...parts };
}
