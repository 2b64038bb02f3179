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
