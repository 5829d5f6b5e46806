// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: hold back the hits of a request that is over anyway.
import type { CounterStore } from '../store';
import type { DescriptorPlan, LimitCheck } from './limit-check';

/**
 * When a limit of the request is over in the local cache, or would go over with these hits,
 * the other limits are not counted: only those that would go over still get the hits, so a
 * request refused by one limit does not use up the others (a descriptor's other limits
 * included). Refunds are never held back.
 */
export async function holdBackHits(
  store: CounterStore,
  plans: readonly DescriptorPlan[],
): Promise<void> {
  const counted: LimitCheck[] = [];
  let isAnyOver = false;
  for (const plan of plans) {
    if (plan.kind !== 'check' || plan.isNegative) continue;
    if (plan.isOverInLocalCache) isAnyOver = true;
    counted.push(plan);
  }
  if (counted.length === 0) return;
  let flags: (readonly boolean[])[] | undefined;
  if (!isAnyOver) {
    const reads = counted.map((check) => check.toRead());
    const current = await store.read(reads.flat());
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
