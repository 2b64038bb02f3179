// Facts the server put into the page (see src/http/web-routes.ts): the capability ids and the
// reasoningEffort values each engine accepts. Read on first use.
export interface Boot {
  capabilities: string[];
  efforts: Record<string, string[]>;
}

let cached: Boot | null = null;
export function boot(): Boot {
  if (cached) return cached;
  try {
    cached = JSON.parse(document.getElementById('boot')?.textContent ?? '{}') as Boot;
  } catch {
    cached = { capabilities: [], efforts: {} };
  }
  cached.capabilities ??= [];
  cached.efforts ??= {};
  return cached;
}
