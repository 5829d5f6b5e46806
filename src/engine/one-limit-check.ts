// What the three algorithms' checks share: one limit of one descriptor, its counting of the
// request, hold-back, and the status it keeps for the response headers.
import type { MatchedLimit, RuleLimit } from '../config';
import type { CounterRead } from '../store';
import { countRequest } from './check-parts';
import type { CheckEnv, CheckInput, LimitCheck, LimitReport } from './limit-check';
import type { StoreBatch, StoreResults } from './store-batch';
import type { DescriptorStatus } from './types';

/**
 * A check of one limit. An algorithm (fixed-window.ts, sliding-window.ts, token-bucket.ts)
 * names the key the local over-limit cache knows it by, says how its hits would exceed the
 * limit, what it adds to the store batch and how it reads the store's answer.
 */
export abstract class OneLimitCheck implements LimitCheck {
  readonly kind = 'check';
  readonly limit: MatchedLimit;
  readonly hits: number;
  readonly isNegative: boolean;
  readonly isOverInLocalCache: boolean;
  protected readonly input: CheckInput;
  protected readonly rule: RuleLimit;
  /** The counter this check feeds, and the local cache's name for it. */
  protected readonly key: string;
  /** Hits sent to the store: the request's, or 0 when held back. */
  protected sentHits: number;
  /** Position of this check's change in its list of the store batch, or -1 when it sent none. */
  protected batchIndex = -1;
  private result: DescriptorStatus | undefined;

  /** Counts the request's hits as total (or total negative) hits. */
  constructor(input: CheckInput, env: CheckEnv, key: string) {
    this.input = input;
    this.limit = input.matched;
    this.rule = input.limit;
    this.hits = input.hits;
    this.key = key;
    this.isNegative = input.descriptor.isNegativeHits;
    this.sentHits = input.hits;
    countRequest(input.stats, input.hits, this.isNegative);
    this.isOverInLocalCache = !this.isNegative && env.localCache?.has(key) === true;
  }

  protected get isPerSecond(): boolean {
    return this.rule.unit === 'SECOND';
  }

  toRead(): readonly CounterRead[] {
    if (this.isOverInLocalCache) return [];
    return [{ key: this.key, isPerSecond: this.isPerSecond }];
  }

  holdBack(exceeding: readonly boolean[] | undefined): void {
    if (exceeding?.[0] !== true) this.sentHits = 0;
  }

  status(results: StoreResults, env: CheckEnv): DescriptorStatus {
    this.result = this.decide(results, env);
    return this.result;
  }

  reports(): readonly LimitReport[] {
    return this.result === undefined ? [] : [{ limit: this.rule, status: this.result }];
  }

  abstract exceeding(current: readonly number[]): readonly boolean[];

  abstract addTo(batch: StoreBatch): void;

  /** The status of the descriptor under this limit, from the store's answer. */
  protected abstract decide(results: StoreResults, env: CheckEnv): DescriptorStatus;
}
