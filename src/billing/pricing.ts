// List-price arithmetic from the catalog: what a model call's usage costs.
import { modelInfo } from '../catalog/catalog.js';
import type { Usage } from '../gateway/types.js';
import { nanoPerToken } from '../money.js';

export function priceOf(model: string) {
  const info = modelInfo(model);
  if (!info) return null;
  return {
    input: nanoPerToken(info.prices.input),
    output: nanoPerToken(info.prices.output),
    cacheRead: nanoPerToken(info.prices.cache_read),
    cacheWrite: nanoPerToken(info.prices.cache_write),
  };
}

export function costNanoUsd(model: string, usage: Usage): bigint {
  const p = priceOf(model);
  if (!p) return 0n;
  return (
    BigInt(usage.inputTokens) * p.input +
    BigInt(usage.outputTokens) * p.output +
    BigInt(usage.cacheReadTokens) * p.cacheRead +
    BigInt(usage.cacheWriteTokens) * p.cacheWrite
  );
}
