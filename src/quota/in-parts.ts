// Work over many items done a part at a time, one part per turn of the event loop, so that a
// reload touching every watched bucket does not hold the other connections up for all of it.

/** The work a part may do before the rest waits for the next turn (a bucket costs its watchers). */
export const PART_WORK = 4096;

/** One pass at a time: starting another abandons the one under way. */
export class PartsRunner {
  private generation = 0;
  private immediate: NodeJS.Immediate | undefined;

  /**
   * Calls `each` on every item in order, the first part now and each later one in a turn of its
   * own; `each` returns the work the item cost, and `afterPart` runs after every part, told whether it was the last.
   */
  run<T>(
    items: readonly T[],
    each: (item: T) => number,
    afterPart: (isDone: boolean) => void,
  ): void {
    this.cancel();
    const generation = this.generation;
    let next = 0;
    const part = (): void => {
      this.immediate = undefined;
      if (generation !== this.generation) return;
      let work = 0;
      while (next < items.length && work < PART_WORK) {
        const item = items[next++];
        if (item !== undefined) work += each(item);
      }
      const isDone = next >= items.length;
      if (!isDone) this.immediate = setImmediate(part);
      afterPart(isDone);
    };
    part();
  }

  /** Whether a pass has parts left. */
  get isRunning(): boolean {
    return this.immediate !== undefined;
  }

  /** Abandons the pass under way. */
  cancel(): void {
    this.generation += 1;
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
  }
}
