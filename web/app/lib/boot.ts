// Facts the server put into the page (see src/http/web-routes.ts): the capability ids and the
// reasoningEffort values each engine accepts.
export interface Boot {
  capabilities: string[];
  efforts: Record<string, string[]>;
}

export const boot: Boot = (() => {
  try {
    return JSON.parse(document.getElementById('boot')?.textContent ?? '{}') as Boot;
  } catch {
    return { capabilities: [], efforts: {} };
  }
})();
