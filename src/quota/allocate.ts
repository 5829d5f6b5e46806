// Max-min fair shares of one bucket's budget among the Envoys watching it: pure arithmetic.

/** One Envoy's claim on a bucket: its demand in requests per unit, undefined while unknown. */
export interface Claim {
  /** Unique among the claims of one bucket (across replicas). */
  readonly id: string;
  /** Requests per unit it let through and denied lately; undefined claims a full share. */
  readonly demand: number | undefined;
}

function byId(a: { readonly id: string }, b: { readonly id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Water-filling. An Envoy whose demand is below the level that the budget left reaches keeps
 * its demand; the others share what is left equally; an unknown demand counts as unbounded,
 * so a new Envoy gets the level at once. When every demand is met, what is left of the budget
 * is split equally on top, so an idle Envoy can start without waiting for its next report.
 * The shares always add up to the budget exactly (there is at least one claim).
 */
export function fairShares(budget: number, claims: readonly Claim[]): Map<string, number> {
  const shares = new Map<string, number>();
  const n = claims.length;
  if (n === 0) return shares;
  const sorted = [...claims].sort(
    (a, b) => (a.demand ?? Infinity) - (b.demand ?? Infinity) || byId(a, b),
  );
  let left = Math.max(0, budget);
  let i = 0;
  for (const claim of sorted) {
    const demand = Math.max(0, claim.demand ?? Infinity);
    if (demand > left / (n - i)) break;
    shares.set(claim.id, demand);
    left -= demand;
    i += 1;
  }
  if (i < n) {
    const level = left / (n - i);
    for (const claim of sorted.slice(i)) shares.set(claim.id, level);
    return shares;
  }
  const extra = left / n;
  for (const [id, share] of shares) shares.set(id, share + extra);
  return shares;
}

/**
 * `total` in whole parts, each claim's in proportion to its weight (`weightTotal` the weights'
 * sum): each part rounded down, then the units the rounding freed go one each to the largest
 * remainders (ties by id, so every replica rounds alike). The parts never add up to more than
 * `total`. A whole weight's part is exact: `(weight × total) / weightTotal` in integers, where
 * `total × (weight / weightTotal)` would give 6 for a 7 of 100,000 of 100,000.
 */
export function wholeParts(
  total: number,
  weights: ReadonlyMap<string, number>,
  weightTotal: number,
): Map<string, number> {
  const parts = new Map<string, number>();
  const remainders: { id: string; rest: number }[] = [];
  let sum = 0;
  for (const [id, weight] of weights) {
    const { whole, rest } = proportion(weight, total, weightTotal);
    parts.set(id, whole);
    sum += whole;
    if (rest > 0) remainders.push({ id, rest });
  }
  let spare = Math.max(0, total) - sum;
  if (spare <= 0 || remainders.length === 0) return parts;
  remainders.sort((a, b) => b.rest - a.rest || byId(a, b));
  for (const { id } of remainders) {
    if (spare <= 0) break;
    parts.set(id, (parts.get(id) ?? 0) + 1);
    spare -= 1;
  }
  return parts;
}

/** 2^52: below it, a product of whole numbers and its quotient's floor are exact in a double. */
const EXACT_BELOW = 2 ** 52;

/** floor(weight × total / weightTotal), and the fraction it dropped (0 when exact). */
function proportion(
  weight: number,
  total: number,
  weightTotal: number,
): { whole: number; rest: number } {
  if (!(weight > 0) || !(weightTotal > 0) || !(total > 0)) return { whole: 0, rest: 0 };
  if (weight >= weightTotal) return { whole: total, rest: 0 };
  const product = weight * total;
  if (Number.isInteger(weight) && Number.isInteger(weightTotal) && product >= EXACT_BELOW) {
    const big = BigInt(weight) * BigInt(total);
    const whole = big / BigInt(weightTotal);
    const left = big - whole * BigInt(weightTotal);
    return { whole: Number(whole), rest: Number(left) / weightTotal };
  }
  const exact = product / weightTotal;
  const whole = Math.floor(exact);
  return { whole, rest: exact - whole };
}
