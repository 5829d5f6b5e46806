// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: hold back the hits of a request that is over anyway.
import { andThen, type Pending } from '../lib/pending';
import type { CounterRead, CounterStore } from '../store';
import type { DescriptorPlan, LimitCheck } from './limit-check';

/** The checks whose hits may be held back, and what to read to know (none: one is over already). */
interface HoldBack {
  readonly counted: readonly LimitCheck[];
  readonly reads: readonly (readonly CounterRead[])[] | undefined;
}

function holdBackOf(plans: readonly DescriptorPlan[]): HoldBack | undefined {
  const counted: LimitCheck[] = [];
  let isAnyOver = false;
  for (const plan of plans) {
    if (plan.kind !== 'check' || plan.isNegative) continue;
    if (plan.isOverInLocalCache) isAnyOver = true;
    counted.push(plan);
  }
  if (counted.length === 0) return undefined;
  return { counted, reads: isAnyOver ? undefined : counted.map((check) => check.toRead()) };
}

/** Holds back the hits `current` (the values of `reads`, flattened) shows going over. */
function apply({ counted, reads }: HoldBack, current: readonly number[] | undefined): void {
  let flags: (readonly boolean[])[] | undefined;
  if (reads !== undefined && current !== undefined) {
    let at = 0;
    flags = counted.map((check, j) => {
      const count = reads[j]?.length ?? 0;
      const slice = current.slice(at, at + count);
      at += count;
      return check.exceeding(slice);
    });
    if (!flags.some((f) => f.includes(true))) return;
  }
  counted.forEach((check, j) => {
    check.holdBack(flags?.[j]);
  });
}

/**
 * When a limit of the request is over in the local cache, or would go over with these hits,
 * the other limits are not counted: only those that would go over still get the hits, so a
 * request refused by one limit does not use up the others (a descriptor's other limits
 * included). Refunds are never held back. Done in the calling turn when the store answers so.
 */
export function holdBackHits(store: CounterStore, plans: readonly DescriptorPlan[]): Pending<void> {
  const held = holdBackOf(plans);
  if (held === undefined) return;
  if (held.reads === undefined) {
    apply(held, undefined);
    return;
  }
  return andThen(store.read(held.reads.flat()), (current) => {
    apply(held, current);
  });
}
