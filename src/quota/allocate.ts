// Max-min fair shares of one bucket's budget among the Envoys watching it: pure arithmetic.

/** One Envoy's claim on a bucket: its demand in requests per unit, undefined while unknown. */
export interface Claim {
  /** Unique among the claims of one bucket (across replicas). */
  readonly id: string;
  /** Requests per unit it let through and denied lately; undefined claims a full share. */
  readonly demand: number | undefined;
}

function byId(a: Claim, b: Claim): number {
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
 * Whole shares that never add up to more than the budget: each share rounded down, then the
 * requests the rounding freed go one each to the largest remainders (ties by id, so every
 * replica rounds alike).
 */
export function wholeShares(
  budget: number,
  shares: ReadonlyMap<string, number>,
): Map<string, number> {
  const whole = new Map<string, number>();
  const remainders: { id: string; rest: number }[] = [];
  let total = 0;
  for (const [id, share] of shares) {
    const floor = Math.floor(share + 1e-9);
    whole.set(id, floor);
    total += floor;
    remainders.push({ id, rest: share - floor });
  }
  let spare = Math.floor(Math.max(0, budget) + 1e-9) - total;
  remainders.sort((a, b) => b.rest - a.rest || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const { id, rest } of remainders) {
    if (spare <= 0 || rest <= 1e-9) break;
    whole.set(id, (whole.get(id) ?? 0) + 1);
    spare -= 1;
  }
  return whole;
}
