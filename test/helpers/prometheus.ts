// Reads a Prometheus text exposition with an independent parser (parse-prometheus-text-format),
// so tests assert what a scraper would read, not what prom-client meant to write. That parser
// drops the labels of labelled histograms (it flattens them for unlabelled ones only), so the text
// is parsed twice: as served (every line must parse; the families' types), and with histograms
// declared untyped, which gives their `_bucket`, `_sum` and `_count` series with their labels.
// @ts-expect-error the parser ships no types; its output shape is typed below
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

export interface Family {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }[];
}

const parse = parsePrometheusTextFormat as (t: string) => Family[];

export function parseMetrics(text: string): Map<string, Family> {
  const out = new Map<string, Family>();
  for (const f of parse(text)) out.set(f.name, { ...f, metrics: f.type === 'HISTOGRAM' ? [] : f.metrics });
  // Histogram series, labels kept (the parser splits a family at each label change: merged here).
  for (const f of parse(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'))) {
    if (!/_(bucket|sum|count)$/.test(f.name)) continue;
    const known = out.get(f.name);
    if (known && known.type !== 'UNTYPED') continue;
    if (known) known.metrics.push(...f.metrics);
    else out.set(f.name, { ...f, metrics: [...f.metrics] });
  }
  return out;
}

/** The sum of the series of `name` whose labels include `labels`; a histogram's observation count. */
export function seriesValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name)?.type === 'HISTOGRAM' ? families.get(`${name}_count`) : families.get(name);
  if (!family) return 0;
  let total = 0;
  for (const m of family.metrics) {
    if (!Object.entries(labels).every(([k, v]) => m.labels?.[k] === v)) continue;
    total += Number(m.value ?? 0);
  }
  return total;
}

/** Every series of the exposition (histograms' as `_bucket`/`_sum`/`_count`), for checks over all of them. */
export function allSeries(families: Map<string, Family>): { name: string; labels: Record<string, string> }[] {
  return [...families.values()].flatMap((f) => f.metrics.map((m) => ({ name: f.name, labels: m.labels ?? {} })));
}
