// Plain-words formatting of dates, money and sizes.
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** Whole cents as dollars: "1234" → "$12.34". */
export function cents(amount: string | null | undefined, currency = 'USD'): string {
  if (amount === null || amount === undefined) return '—';
  const n = Number(amount) / 100;
  return new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() }).format(n);
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Tokens and list cost (a turn's on its idle event, a session's totals). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  costUsd: string;
  modelCalls: number;
  toolCalls: number;
}
export const USAGE_FIELDS = 'inputTokens outputTokens cacheReadInputTokens cacheCreationInputTokens costUsd modelCalls toolCalls';

const count = (n: number) => n.toLocaleString('en-US');
/** "12,345 in · 678 out · 9,000 cached (1,000 written) · $0.0123 · 3 model calls · 2 tool calls" */
export function usageText(u: Usage): string {
  const usd = Number(u.costUsd);
  return [
    `${count(u.inputTokens)} in`,
    `${count(u.outputTokens)} out`,
    `${count(u.cacheReadInputTokens)} cached (${count(u.cacheCreationInputTokens)} written)`,
    `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`,
    `${u.modelCalls} model call${u.modelCalls === 1 ? '' : 's'}`,
    `${u.toolCalls} tool call${u.toolCalls === 1 ? '' : 's'}`,
  ].join(' · ');
}
