// Several limits on one descriptor (rate_limit beside rate_limits): a check per limit, one answer.
import type { MatchedLimit } from '../config';
import type { CounterRead } from '../store';
import type { CheckEnv, LimitCheck, LimitReport } from './limit-check';
import type { StoreBatch, StoreResults } from './store-batch';
import type { DescriptorStatus } from './types';

/**
 * Counts each limit with its own check and key. The descriptor is OVER_LIMIT when any limit is;
 * its status is the first refusing limit's, or when all admit, the one with the fewest requests
 * remaining (the first of equals), so current_limit names the limit that decided.
 */
export class MultiLimitCheck implements LimitCheck {
  readonly kind = 'check';
  readonly limit: MatchedLimit;
  readonly hits: number;
  readonly isNegative: boolean;
  readonly isOverInLocalCache: boolean;

  constructor(private readonly parts: readonly LimitCheck[]) {
    const first = parts[0];
    if (first === undefined) throw new Error('a descriptor with several limits has none');
    this.limit = first.limit;
    this.hits = first.hits;
    this.isNegative = first.isNegative;
    this.isOverInLocalCache = parts.some((p) => p.isOverInLocalCache);
  }

  toRead(): readonly CounterRead[] {
    return this.parts.flatMap((p) => p.toRead());
  }

  exceeding(current: readonly number[]): readonly boolean[] {
    const flags: boolean[] = [];
    let at = 0;
    for (const part of this.parts) {
      const count = part.toRead().length;
      flags.push(...part.exceeding(current.slice(at, at + count)));
      at += count;
    }
    return flags;
  }

  holdBack(exceeding: readonly boolean[] | undefined): void {
    this.parts.forEach((part, i) => {
      part.holdBack(exceeding === undefined ? undefined : [exceeding[i] === true]);
    });
  }

  addTo(batch: StoreBatch): void {
    for (const part of this.parts) part.addTo(batch);
  }

  status(results: StoreResults, env: CheckEnv): DescriptorStatus {
    const [first, ...rest] = this.parts.map((part) => part.status(results, env));
    if (first === undefined) throw new Error('a descriptor with several limits has none');
    let chosen = first;
    for (const status of rest) {
      if (chosen.code === 'OVER_LIMIT') break;
      if (status.code === 'OVER_LIMIT' || status.limitRemaining < chosen.limitRemaining)
        chosen = status;
    }
    return chosen;
  }

  reports(): readonly LimitReport[] {
    return this.parts.flatMap((p) => p.reports());
  }
}
