// Money inside the service is BigInt nano-dollars (1e-9 USD): list prices (USD per million
// tokens, up to three decimals) times token counts stay exact. The API shows whole cents.
export const NANO_PER_CENT = 10_000_000n;

export function centsToNano(cents: bigint | number): bigint {
  return BigInt(cents) * NANO_PER_CENT;
}

/** Whole cents, rounded down (never overstating spend or balance). */
export function nanoToCents(nano: bigint): bigint {
  return nano >= 0n ? nano / NANO_PER_CENT : -((-nano + NANO_PER_CENT - 1n) / NANO_PER_CENT);
}

/** USD per million tokens → nano-dollars per token (exact for prices with ≤ 3 decimals). */
export function nanoPerToken(usdPerMillion: number): bigint {
  return BigInt(Math.round(usdPerMillion * 1000));
}
