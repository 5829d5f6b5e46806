// The memory store's table against keys chosen to collide: descriptor values come from
// clients, so a client that can compute where keys land could make every lookup walk a chain.
import { CounterTable } from '../../../src/store/memory/counter-table';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** Unseeded 32-bit FNV-1a over UTF-16 code units, from `state`. */
function fnv1a(text: string, state = FNV_OFFSET): number {
  let h = state;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}

const isSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdfff;

/**
 * Two different two-unit blocks that take FNV-1a from `state` to the same state: first units
 * whose products share their high 16 bits (a birthday search over a few hundred units), then
 * second units that cancel the low 16 bits.
 */
function collidingBlocks(state: number): [string, string] {
  const byHigh = new Map<number, number>();
  for (let first = 0x100; first < 0xd800; first++) {
    const product = Math.imul(state ^ first, FNV_PRIME) >>> 0;
    const other = byHigh.get(product >>> 16);
    if (other === undefined) {
      byHigh.set(product >>> 16, first);
      continue;
    }
    const second = 0x61;
    const otherSecond = second ^ ((Math.imul(state ^ other, FNV_PRIME) ^ product) & 0xffff);
    if (isSurrogate(otherSecond)) continue;
    return [String.fromCharCode(first, second), String.fromCharCode(other, otherSecond)];
  }
  throw new Error('no colliding blocks found');
}

/**
 * 2^blocks cache keys whose whole 32-bit FNV-1a state is the same: each block position offers
 * two colliding choices, and the choices multiply. What a client could send as descriptor
 * values, computed in milliseconds, against a table hashed by unseeded FNV-1a.
 */
function collidingKeys(prefix: string, blocks: number, suffix: string): string[] {
  let keys = [prefix];
  let state = fnv1a(prefix);
  for (let b = 0; b < blocks; b++) {
    const [one, other] = collidingBlocks(state);
    keys = keys.flatMap((key) => [key + one, key + other]);
    state = fnv1a(one, state);
  }
  return keys.map((key) => key + suffix);
}

it('keeps lookups short for keys built to collide under an unseeded hash', () => {
  const keys = collidingKeys('edge_user_', 10, '_1700000000');
  expect(new Set(keys).size).toBe(1024);
  // They do collide: one FNV-1a state for all, so one position in any table hashed by it.
  expect(new Set(keys.map((key) => fnv1a(key))).size).toBe(1);
  const table = new CounterTable();
  keys.forEach((key, i) => {
    table.set(key, i, 1000);
  });
  // Measured in positions walked, not time. Spread evenly, 1,024 keys over 256 shards at most
  // half full walk one or two positions; piled on one position, up to 1,024.
  const probes = table.probeLengths();
  expect(probes.longest).toBeLessThanOrEqual(16);
  expect(probes.mean).toBeLessThan(2);
  expect(Math.max(...table.shardSizes())).toBeLessThan(30);
  expect(keys.map((key) => table.value(table.find(key)))).toEqual(keys.map((_, i) => i));
});

it('places the same keys differently in each table: its hash is keyed per table', () => {
  const keys = Array.from({ length: 2000 }, (_, i) => `domain_key_value${i}_1700000000`);
  const [a, b] = [new CounterTable(), new CounterTable()];
  for (const key of keys) {
    a.set(key, 1, 1000);
    b.set(key, 1, 1000);
  }
  expect(a.shardSizes()).not.toEqual(b.shardSizes());
});
