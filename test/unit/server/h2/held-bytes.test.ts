// Held bytes: small requests in pooled Buffers, larger ones in mapped stores reused after release.
import { HeldBytes, mappedStores } from '../../../../src/server/h2/held-bytes';

describe('held bytes', () => {
  it('keeps what is appended, across growth, and copies it out whole', () => {
    const held = new HeldBytes(100_000);
    const parts = [Buffer.alloc(10, 1), Buffer.alloc(5000, 2), Buffer.alloc(20_000, 3)];
    for (const part of parts) expect(held.append(part)).toBe(true);
    expect(held.length).toBe(25_010);
    const copy = held.copy();
    expect(copy.equals(Buffer.concat(parts))).toBe(true);
    const target = Buffer.alloc(30_000, 9);
    expect(held.copyTo(target).equals(Buffer.concat(parts))).toBe(true);
    // The copies outlive the release.
    held.release();
    expect(copy.equals(Buffer.concat(parts))).toBe(true);
  });

  it('gives its memory back on release, and may be filled again', () => {
    const held = new HeldBytes(1 << 20);
    held.append(Buffer.alloc(300_000, 7));
    expect(held.committedBytes).toBeGreaterThanOrEqual(300_000);
    held.release();
    expect(held.length).toBe(0);
    expect(held.committedBytes).toBe(0);
    expect(held.copy().length).toBe(0);
    held.append(Buffer.from('again'));
    expect(held.copy().toString()).toBe('again');
  });

  it('refuses bytes past its most', () => {
    const held = new HeldBytes(8);
    held.append(Buffer.alloc(8));
    expect(() => {
      held.append(Buffer.alloc(1));
    }).toThrow(RangeError);
    expect(held.length).toBe(8);
  });

  it('holds a few KiB, in any number of pieces, without a mapping', () => {
    const before = mappedStores();
    const held = Array.from({ length: 1000 }, () => new HeldBytes(1 << 20));
    for (let i = 0; i < 4000; i++) held[i % 1000]?.append(Buffer.from([i & 0xff]));
    expect(held.every((h) => !h.isMapped && h.length === 4)).toBe(true);
    expect(mappedStores()).toBe(before);
    for (const h of held) h.release();
  });

  it('maps what outgrows a pooled Buffer, and reuses the store once released', () => {
    const first = new HeldBytes(1 << 20);
    first.append(Buffer.alloc(3000, 1));
    expect(first.isMapped).toBe(false);
    first.append(Buffer.alloc(3000, 2));
    expect(first.isMapped).toBe(true);
    expect(first.copy().equals(Buffer.concat([Buffer.alloc(3000, 1), Buffer.alloc(3000, 2)]))).toBe(
      true,
    );
    const made = mappedStores();
    first.release();
    for (let i = 0; i < 100; i++) {
      const next = new HeldBytes(1 << 20);
      next.append(Buffer.alloc(10_000, 3));
      expect(next.isMapped).toBe(true);
      next.release();
    }
    expect(mappedStores()).toBe(made);
  });

  it('refuses a large hold when no store can be reserved, unless the heap may take it', () => {
    const held = new HeldBytes(2 ** 53);
    expect(held.append(Buffer.alloc(5000))).toBe(false);
    expect(held.length).toBe(0);
    expect(held.append(Buffer.alloc(5000), true)).toBe(true);
    expect(held.isMapped).toBe(false);
    expect(held.length).toBe(5000);
  });
});
