// The cost curves: how the cost of an answer grows with the work in it (descriptors, distinct
// keys, over-limit share, request size), and the WORKERS rows, one per worker count.
import { PLACEHOLDER } from './load';
import {
  blocked,
  body,
  distinct,
  one,
  scenario,
  three,
  type Kind,
  type Scenario,
} from './scenarios';

const ten = (kind: Kind): string[] => [
  body(
    kind,
    Array.from({ length: 10 }, (_, i): [string, string][] => [['user', `d${i}`]]),
  ),
];
const numbered = (kind: Kind): string[] => [body(kind, [[['user', `m${PLACEHOLDER}`]]])];
const tenNumbered = (kind: Kind): string[] => [
  body(
    kind,
    Array.from({ length: 10 }, (): [string, string][] => [['user', `m${PLACEHOLDER}`]]),
  ),
];
/** One counted descriptor and an unmatched one that makes the request about 4 KiB. */
const large = (kind: Kind): string[] => [
  body(kind, [[['k1', 'a']], [['unmatched', 'x'.repeat(4000)]]]),
];
const halfBlocked = (kind: Kind): string[] => [...one(kind), ...blocked(kind)];

const REDIS_ONE = 'redis, 1 descriptor';
const MEMORY_ONE = 'memory, 1 descriptor';
const CACHE = { LOCAL_CACHE_SIZE_IN_BYTES: '1048576', DEBUG_RECENT_DECISIONS: '0' };

export const CURVES: readonly Scenario[] = [
  scenario({ name: 'redis, 10 descriptors', bodies: ten, reference: REDIS_ONE }),
  scenario({
    name: 'memory, 3 descriptors',
    backend: 'memory',
    bodies: three,
    reference: MEMORY_ONE,
  }),
  scenario({
    name: 'memory, 10 descriptors',
    backend: 'memory',
    bodies: ten,
    reference: MEMORY_ONE,
  }),
  scenario({
    name: 'redis, 1,000,000 distinct keys',
    bodies: numbered,
    distinct: 1_000_000,
    reference: REDIS_ONE,
  }),
  scenario({
    name: 'memory, 10,000 distinct keys',
    backend: 'memory',
    bodies: distinct,
    reference: MEMORY_ONE,
  }),
  scenario({
    name: 'memory, 1,000,000 distinct keys',
    backend: 'memory',
    bodies: numbered,
    distinct: 1_000_000,
    // Ten keys a call: the million live keys exist before the warm-up starts.
    fill: { bodies: tenNumbered, calls: 100_000 },
    reference: MEMORY_ONE,
  }),
  scenario({
    name: 'redis, local cache, 0% over limit',
    bodies: one,
    env: CACHE,
    reference: REDIS_ONE,
  }),
  scenario({
    name: 'redis, local cache, 50% over limit',
    bodies: halfBlocked,
    env: CACHE,
    expect: 'OK|OVER_LIMIT',
    reference: REDIS_ONE,
  }),
  scenario({
    name: 'redis, local cache, 100% over limit',
    bodies: blocked,
    env: CACHE,
    expect: 'OVER_LIMIT',
    reference: REDIS_ONE,
  }),
  scenario({ name: 'redis, 1 descriptor, 4 KiB request', bodies: large, reference: REDIS_ONE }),
];

/** WORKERS rows for each count of BENCH_WORKERS (default 1,2), all on the same cores. */
export function workerScenarios(counts: string): Scenario[] {
  return counts
    .split(',')
    .map((n) => Number(n.trim()))
    .filter((n) => Number.isInteger(n) && n >= 1)
    .map((workers) =>
      scenario({ name: `redis, 1 descriptor, WORKERS=${workers}`, bodies: one, workers }),
    );
}
