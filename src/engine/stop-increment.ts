// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: hold back the hits of a request that is over anyway.
import type { CounterStore } from '../store';
import type { DescriptorPlan, LimitCheck } from './limit-check';

/**
 * When a key of the request is over in the local cache, or would go over its limit with these
 * hits, the other keys are not counted: only those that would go over still get the hits, so
 * a request refused by one limit does not use up the others. Refunds are never held back.
 */
export async function holdBackHits(
  store: CounterStore,
  plans: readonly DescriptorPlan[],
): Promise<void> {
  const counted: LimitCheck[] = [];
  let isAnyOver = false;
  for (const plan of plans) {
    if (plan.kind !== 'check') continue;
    if (plan.isOverInLocalCache) isAnyOver = true;
    else if (!plan.isNegative) counted.push(plan);
  }
  if (counted.length === 0) return;
  let exceeding: readonly boolean[] | undefined;
  if (!isAnyOver) {
    const current = await store.read(counted.map((check) => check.toRead()));
    exceeding = counted.map((check, j) => check.wouldExceed(current[j] ?? 0));
    if (!exceeding.includes(true)) return;
  }
  counted.forEach((check, j) => {
    if (exceeding?.[j] !== true) check.holdBack();
  });
}
