import { HeldBytes } from '../../../../src/server/h2/held-bytes';

function reserve(maxBytes: number): HeldBytes {
  const held = HeldBytes.reserve(maxBytes);
  if (held === undefined) throw new Error(`no room for ${String(maxBytes)} bytes`);
  return held;
}

describe('held bytes', () => {
  it('keeps what is appended, across growth, and copies it out whole', () => {
    const held = reserve(100_000);
    const parts = [Buffer.alloc(10, 1), Buffer.alloc(5000, 2), Buffer.alloc(20_000, 3)];
    for (const part of parts) held.append(part);
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
    const held = reserve(1 << 20);
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
    const held = reserve(8);
    held.append(Buffer.alloc(8));
    expect(() => {
      held.append(Buffer.alloc(1));
    }).toThrow(RangeError);
    expect(held.length).toBe(8);
  });

  it('is undefined when its room cannot be reserved, for the caller to refuse', () => {
    expect(HeldBytes.reserve(2 ** 53)).toBeUndefined();
  });
});
