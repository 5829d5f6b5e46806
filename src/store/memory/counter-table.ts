// The memory store's counters: per key a value and an expiry, in open-addressing tables whose
// arrays hold them directly instead of an object per key.
import { randomBytes } from 'node:crypto';

/**
 * Arrays rather than a Map of slot objects, because a lookup then reads one hash-and-key pair
 * and one value-and-expiry pair instead of five objects scattered in memory; the keys are split
 * over SHARDS tables so that a resize rebuilds a 256th of them.
 */
const SHARDS = 256;
const SHARD_BITS = 8;
const MIN_CAPACITY = 16;
/** The stored hash keeps 30 bits, a small integer on every V8 build; 8 pick the shard. */
const HASH_MASK = 0x3fffffff;
const MAX_CAPACITY = 1 << (30 - SHARD_BITS);

/** A 32-bit rotation to the left. */
const rotl = (x: number, bits: number): number => (x << bits) | (x >>> (32 - bits));

/**
 * HalfSipHash-1-3 (the keyed hash Linux uses for its hash tables) over the UTF-16 code units,
 * two to a word, keyed by a random per-table secret. Keys hold values clients choose, and
 * with an unkeyed hash (FNV-1a here before) a client can compute offline keys that share a
 * table position and make every lookup walk all of them; a seed mixed into FNV or a
 * finaliser would not stop that, since their collisions do not depend on it. SipHash's
 * 64-bit words would need pairs of halves or BigInt in JavaScript; the half variant works on
 * the 32-bit integers V8 computes natively, and costs about what FNV-1a did on cache keys.
 */
function hashOf(key: string, k0: number, k1: number): number {
  // `| 0`: a key outside V8's small integers is held as a double, and the state would stay
  // one through the loop, doubling the cost of the hash, unless it starts as an int32.
  let v0 = k0 | 0;
  let v1 = k1 | 0;
  let v2 = 0x6c796765 ^ k0;
  let v3 = 0x74656462 ^ k1;
  const length = key.length;
  let i = 0;
  for (; i + 1 < length; i += 2) {
    const m = key.charCodeAt(i) | (key.charCodeAt(i + 1) << 16);
    v3 ^= m;
    v0 = (v0 + v1) | 0;
    v1 = rotl(v1, 5) ^ v0;
    v0 = rotl(v0, 16);
    v2 = (v2 + v3) | 0;
    v3 = rotl(v3, 8) ^ v2;
    v0 = (v0 + v3) | 0;
    v3 = rotl(v3, 7) ^ v0;
    v2 = (v2 + v1) | 0;
    v1 = rotl(v1, 13) ^ v2;
    v2 = rotl(v2, 16);
    v0 ^= m;
  }
  // The last word: the length in bytes (mod 256) on top, the odd code unit if any below.
  const last = ((length * 2) << 24) | (i < length ? key.charCodeAt(i) : 0);
  v3 ^= last;
  for (let round = 0; round < 4; round++) {
    // One compression round for the last word, then (after v0 ^= last, v2 ^= 0xff) three.
    if (round === 1) {
      v0 ^= last;
      v2 ^= 0xff;
    }
    v0 = (v0 + v1) | 0;
    v1 = rotl(v1, 5) ^ v0;
    v0 = rotl(v0, 16);
    v2 = (v2 + v3) | 0;
    v3 = rotl(v3, 8) ^ v2;
    v0 = (v0 + v3) | 0;
    v3 = rotl(v3, 7) ^ v0;
    v2 = (v2 + v1) | 0;
    v1 = rotl(v1, 13) ^ v2;
    v2 = rotl(v2, 16);
  }
  return (v1 ^ v3) & HASH_MASK;
}

/** One open-addressing table with linear probing, at most half full. */
class Shard {
  count = 0;
  readonly mask: number;
  /** [hash, key] at 2i, 2i + 1; the key is undefined where position i is empty. */
  readonly ids: (number | string | undefined)[] = [];
  /** [value, expiresAtMs] at 2i, 2i + 1. */
  readonly data: Float64Array;

  constructor(readonly capacity: number) {
    this.mask = capacity - 1;
    // Pushed one by one so that V8 keeps the array packed (no holes to check on every read).
    for (let i = 0; i < capacity; i++) this.ids.push(0, undefined);
    this.data = new Float64Array(capacity * 2);
  }

  home(hash: number): number {
    return (hash >>> SHARD_BITS) & this.mask;
  }

  /** The position of `key`, or -1 - the empty position where it would go. */
  find(hash: number, key: string): number {
    const ids = this.ids;
    for (let i = this.home(hash); ; i = (i + 1) & this.mask) {
      const stored = ids[2 * i + 1];
      if (stored === undefined) return -1 - i;
      if (ids[2 * i] === hash && stored === key) return i;
    }
  }

  put(at: number, hash: number, key: string, value: number, expiresAtMs: number): void {
    this.ids[2 * at] = hash;
    this.ids[2 * at + 1] = key;
    this.data[2 * at] = value;
    this.data[2 * at + 1] = expiresAtMs;
  }

  /** Empties position `hole`, moving up the entries after it that could not reach it. */
  remove(hole: number): void {
    const { ids, data, mask } = this;
    for (let j = (hole + 1) & mask; ids[2 * j + 1] !== undefined; j = (j + 1) & mask) {
      const home = this.home(ids[2 * j] as number);
      // The entry at j stays when its home lies cyclically in (hole, j].
      const stays = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (stays) continue;
      this.put(
        hole,
        ids[2 * j] as number,
        ids[2 * j + 1] as string,
        data[2 * j] as number,
        data[2 * j + 1] as number,
      );
      hole = j;
    }
    ids[2 * hole] = 0;
    ids[2 * hole + 1] = undefined;
    this.count -= 1;
  }

  /** Per stored key, how many positions a lookup of it walks: one at its home, more past it. */
  walks(): number[] {
    const out: number[] = [];
    for (let i = 0; i <= this.mask; i++) {
      if (this.ids[2 * i + 1] === undefined) continue;
      out.push(((i - this.home(this.ids[2 * i] as number)) & this.mask) + 1);
    }
    return out;
  }

  /** The same entries in a table of `capacity` positions. */
  resized(capacity: number): Shard {
    const next = new Shard(capacity);
    for (let i = 0; i <= this.mask; i++) {
      const key = this.ids[2 * i + 1];
      if (key === undefined) continue;
      const hash = this.ids[2 * i] as number;
      next.put(
        -1 - next.find(hash, key as string),
        hash,
        key as string,
        this.data[2 * i] as number,
        this.data[2 * i + 1] as number,
      );
    }
    next.count = this.count;
    return next;
  }
}

/**
 * Counters by key. A position returned by find() stays valid until the next insert or delete
 * (either may move entries), which is how the store uses it: look up, then read or update.
 */
export class CounterTable {
  private shards = Array.from({ length: SHARDS }, () => new Shard(MIN_CAPACITY));
  private count = 0;
  /** The hash's secret key, drawn once per table: no client can know where a key lands. */
  private readonly k0: number;
  private readonly k1: number;

  constructor() {
    const secret = randomBytes(8);
    this.k0 = secret.readInt32LE(0);
    this.k1 = secret.readInt32LE(4);
  }

  get size(): number {
    return this.count;
  }

  /** Where `key` is (shard in the low bits), or -1 when the table does not hold it. */
  find(key: string): number {
    const hash = hashOf(key, this.k0, this.k1);
    const shard = hash & (SHARDS - 1);
    const at = (this.shards[shard] as Shard).find(hash, key);
    return at < 0 ? -1 : at * SHARDS + shard;
  }

  value(position: number): number {
    return this.shardAt(position).data[2 * (position >>> SHARD_BITS)] as number;
  }

  expiresAtMs(position: number): number {
    return this.shardAt(position).data[2 * (position >>> SHARD_BITS) + 1] as number;
  }

  update(position: number, value: number, expiresAtMs: number): void {
    const data = this.shardAt(position).data;
    const at = 2 * (position >>> SHARD_BITS);
    data[at] = value;
    data[at + 1] = expiresAtMs;
  }

  /** Adds `key` or replaces what it holds. */
  set(key: string, value: number, expiresAtMs: number): void {
    const hash = hashOf(key, this.k0, this.k1);
    const index = hash & (SHARDS - 1);
    let shard = this.shards[index] as Shard;
    let at = shard.find(hash, key);
    if (at >= 0) {
      shard.put(at, hash, key, value, expiresAtMs);
      return;
    }
    if ((shard.count + 1) * 2 > shard.capacity) {
      if (shard.capacity >= MAX_CAPACITY) throw new RangeError('memory store: a table is full');
      shard = this.shards[index] = shard.resized(shard.capacity * 2);
      at = shard.find(hash, key);
    }
    shard.put(-1 - at, hash, key, value, expiresAtMs);
    shard.count += 1;
    this.count += 1;
  }

  delete(key: string): boolean {
    const position = this.find(key);
    if (position < 0) return false;
    this.deleteAt(position);
    return true;
  }

  /** Removes the entry at a position find() gave, without looking the key up again. */
  deleteAt(position: number): void {
    const index = position & (SHARDS - 1);
    const shard = this.shards[index] as Shard;
    shard.remove(position >>> SHARD_BITS);
    this.count -= 1;
    // Halved at an eighth full, so that a sweep's deletions give the memory back without a
    // table that sits at the edge flipping between two sizes.
    if (shard.count * 8 < shard.capacity && shard.capacity > MIN_CAPACITY)
      this.shards[index] = shard.resized(shard.capacity / 2);
  }

  clear(): void {
    this.shards = Array.from({ length: SHARDS }, () => new Shard(MIN_CAPACITY));
    this.count = 0;
  }

  /** How many keys each shard holds (how evenly the hash spreads them). */
  shardSizes(): number[] {
    return this.shards.map((shard) => shard.count);
  }

  /** The longest and the mean walk of a lookup over the stored keys (how well the hash spreads them). */
  probeLengths(): { longest: number; mean: number } {
    let longest = 0;
    let total = 0;
    let keys = 0;
    for (const shard of this.shards) {
      for (const walk of shard.walks()) {
        longest = Math.max(longest, walk);
        total += walk;
        keys += 1;
      }
    }
    return { longest, mean: keys === 0 ? 0 : total / keys };
  }

  private shardAt(position: number): Shard {
    return this.shards[position & (SHARDS - 1)] as Shard;
  }
}
