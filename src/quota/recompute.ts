// When a bucket's shares are computed again: at once while few Envoys share it, and otherwise
// once at the end of the event-loop turn for watches taken and given up, and at the next tick
// (which shares out every bucket) for a change of demand, never once per report.
import type { Bucket, Watching } from './bucket';

/**
 * Claims (local and remote) up to which a bucket is shared out again at once. Water-filling
 * sorts the claims, so a report on a bucket of n Envoys cost O(n log n): about 60 µs at 10 and
 * 11 ms at 10,000 (bench/rlqs-recompute.ts); at 64 it costs a few microseconds.
 */
export const INLINE_CLAIMS = 64;

/** Buckets waiting for the end of the turn, and the timer that takes them. */
export class RecomputeQueue<S extends Watching> {
  private readonly soon = new Set<Bucket<S>>();
  private immediate: NodeJS.Immediate | undefined;

  /** @param afterTurn shares out the waiting buckets' holders' news (the service's flush). */
  constructor(private readonly afterTurn: () => void) {}

  /**
   * Something changed in the bucket: a watch taken or given up (`isWatchChanged`) or only a
   * measured demand. Small buckets are shared out now; a large one waits for the turn's end
   * (watches) or the next tick (demand).
   */
  changed(bucket: Bucket<S>, isWatchChanged: boolean): void {
    if (bucket.watchers.size + bucket.remote.length <= INLINE_CLAIMS) {
      bucket.reallocate();
      return;
    }
    if (!isWatchChanged) return;
    this.soon.add(bucket);
    this.immediate ??= setImmediate(() => {
      this.immediate = undefined;
      this.run();
    });
  }

  /** The tick shares out every bucket: none needs to wait for the turn's end any more. */
  clear(): void {
    this.soon.clear();
  }

  /** Stops the timer (the service is closing). */
  close(): void {
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
    this.soon.clear();
  }

  private run(): void {
    for (const bucket of this.soon) if (bucket.watchers.size > 0) bucket.reallocate();
    this.soon.clear();
    this.afterTurn();
  }
}
