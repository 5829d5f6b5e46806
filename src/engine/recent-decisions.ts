// The last over-limit decisions, kept for the debug listener: a fixed ring, one write a refusal.
import type { DescriptorEntry, MatchedLimit, RuleLimit } from '../config';
import type { Clock } from '../lib/clock';

/** One descriptor found over its limit. */
export interface RecentDecision {
  /** 1 for the first decision recorded, then one more for each; pages ask for those after one. */
  readonly seq: number;
  readonly atMs: number;
  readonly domain: string;
  readonly entries: readonly DescriptorEntry[];
  /** The rule it was over; formatted only when someone reads the ring. */
  readonly limit: MatchedLimit;
  /** Which of the rule's limits refused it (a rule may have several). */
  readonly ruleLimit: RuleLimit;
  readonly hits: number;
  readonly remaining: number;
  /** Let through all the same: the rule is in shadow mode, or SHADOW_MODE is on. */
  readonly isShadow: boolean;
  /** Answered from the local over-limit cache, without the store. */
  readonly isFromLocalCache: boolean;
}

/** What a check tells the ring; the ring adds the sequence number and the time. */
export type DecisionToRecord = Omit<RecentDecision, 'seq' | 'atMs'>;

/**
 * A ring of the last `capacity` decisions. Recording stores the object the check made and its
 * time, nothing more, on the over-limit path; the OK path never reaches it, and with capacity 0
 * there is no ring at all (the engine holds undefined). Sequence numbers follow from the slot,
 * and ordering is the reader's work.
 */
export class RecentDecisions {
  private readonly slots: (DecisionToRecord | undefined)[];
  private readonly times: Float64Array;
  private count = 0;

  constructor(
    readonly capacity: number,
    private readonly clock: Clock,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`a decision ring needs a capacity of at least 1, not ${capacity}`);
    this.slots = new Array<DecisionToRecord | undefined>(capacity).fill(undefined);
    this.times = new Float64Array(capacity);
  }

  record(decision: DecisionToRecord): void {
    const slot = this.count % this.capacity;
    this.slots[slot] = decision;
    this.times[slot] = this.clock.nowMs();
    this.count += 1;
  }

  /** Decisions recorded since start-up, including those the ring no longer holds. */
  get total(): number {
    return this.count;
  }

  /** At most `max` of the decisions held with a sequence number above `afterSeq`, newest first. */
  newestFirst(afterSeq = 0, max = this.capacity): RecentDecision[] {
    const out: RecentDecision[] = [];
    const oldest = Math.max(this.count - this.capacity, afterSeq, this.count - max);
    for (let seq = this.count; seq > oldest; seq--) {
      const slot = (seq - 1) % this.capacity;
      const decision = this.slots[slot];
      if (decision !== undefined) out.push({ seq, atMs: this.times[slot] ?? 0, ...decision });
    }
    return out;
  }
}
