// Resource ids: `<prefix>_<ULID>` in lower case, unique, ordered by creation, and their random
// part drawn evenly from the whole alphabet (the pooled source of src/ids.ts).
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.js';
import { channelId } from '../../src/channels/ids.js';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

describe('ids', () => {
  it('have the prefix and 26 Crockford base32 characters, are unique and sort in creation order', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => (i % 2 ? newId('evt') : channelId('chin')).split('_')[1]!);
    for (const id of ids.slice(0, 50)) expect(id).toMatch(/^[0-9abcdefghjkmnpqrstvwxyz]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids); // one monotonic source for both kinds
    expect(newId('sess')).toMatch(/^sess_[0-9a-z]{26}$/);
  });

  it('the random part uses every character about equally often', async () => {
    const counts = new Map<string, number>();
    // A new millisecond draws a fresh random part: wait for a few, take the last 16 characters.
    for (let i = 0; i < 300; i++) {
      for (const c of newId('evt').slice(-16)) counts.set(c, (counts.get(c) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 1));
    }
    expect([...counts.keys()].sort().join('')).toBe(CROCKFORD);
    const expected = (300 * 16) / 32;
    for (const n of counts.values()) expect(Math.abs(n - expected)).toBeLessThan(expected * 0.5);
  });
});
