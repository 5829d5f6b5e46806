// Pure decision arithmetic: from the counter before and after a request to a code and stat deltas.

/** What one counted descriptor yields. */
export interface Classification {
  readonly isOverLimit: boolean;
  readonly limitRemaining: number;
  readonly nearLimitHits: number;
  readonly overLimitHits: number;
  readonly withinLimitHits: number;
  /** Hits that shadow mode let through (only when the rule is in shadow mode). */
  readonly shadowHits: number;
}

/** The near-limit threshold: floor(limit × ratio). */
export function nearLimitThreshold(limit: number, ratio: number): number {
  // The reference multiplies in single precision; Math.fround keeps the same thresholds.
  return Math.floor(Math.fround(Math.fround(limit) * Math.fround(ratio)));
}

/**
 * Splits a request's hits across the thresholds as docs/compat.md "Decisions" states: within the
 * limit all hits count as within_limit and the part above the near threshold as near_limit;
 * over the limit the part above the limit counts as over_limit and the part between the near
 * threshold and the limit as near_limit.
 */
export function classify(
  limit: number,
  before: number,
  after: number,
  hits: number,
  nearRatio: number,
  isShadow: boolean,
): Classification {
  const near = nearLimitThreshold(limit, nearRatio);
  if (after > limit) {
    const wasAlreadyOver = before >= limit;
    const overLimitHits = wasAlreadyOver ? hits : after - limit;
    const nearLimitHits = wasAlreadyOver ? 0 : limit - Math.max(near, before);
    return {
      isOverLimit: true,
      limitRemaining: 0,
      nearLimitHits,
      overLimitHits,
      withinLimitHits: 0,
      shadowHits: isShadow ? overLimitHits : 0,
    };
  }
  let nearLimitHits = 0;
  if (after > near) nearLimitHits = before >= near ? hits : after - near;
  return {
    isOverLimit: false,
    limitRemaining: limit - after,
    nearLimitHits,
    overLimitHits: 0,
    withinLimitHits: hits,
    shadowHits: 0,
  };
}
