// A stream's sending half as the connection's send side keeps it: the DATA waiting for flow
// control window, what follows it, and where the stream waits (section 6.9).

/** What follows a stream's queued DATA once it has left. */
export type DataEnding = 'end' | 'trailers' | undefined;

/**
 * Where a stream with queued DATA waits: `ready` for the connection window (in the send side's
 * queue), `parked` for its own window (a WINDOW_UPDATE on it, or a larger initial window).
 */
export type WaitingPlace = 'none' | 'ready' | 'parked';

export class OutgoingState {
  /**
   * The stream's window less the client's SETTINGS_INITIAL_WINDOW_SIZE: credits minus bytes
   * sent. Kept relative so a new initial window changes every stream's window at once.
   */
  private adjust = 0;
  private queue: Buffer[] | undefined = undefined;
  private pendingEnding: DataEnding = undefined;
  private where: WaitingPlace = 'none';

  /** The window this stream may send in, given the client's initial window. */
  window(initialWindow: number): number {
    return initialWindow + this.adjust;
  }

  /** A WINDOW_UPDATE for the stream; returns the new offset from the initial window. */
  credit(increment: number): number {
    this.adjust += increment;
    return this.adjust;
  }

  get place(): WaitingPlace {
    return this.where;
  }

  moveTo(place: WaitingPlace): void {
    this.where = place;
  }

  get ending(): DataEnding {
    return this.pendingEnding;
  }

  /** Queues `data` (when not empty) and the ending, when one is given. */
  enqueue(data: Buffer | undefined, ending: DataEnding): void {
    if (data !== undefined && data.length > 0) (this.queue ??= []).push(data);
    if (ending !== undefined) this.pendingEnding = ending;
  }

  /** The oldest queued chunk, if any. */
  head(): Buffer | undefined {
    const queue = this.queue;
    return queue === undefined || queue.length === 0 ? undefined : queue[0];
  }

  /** Whether `length` bytes of the head are the last DATA and END_STREAM goes with them. */
  endsWith(length: number): boolean {
    const queue = this.queue;
    return (
      this.pendingEnding === 'end' &&
      queue !== undefined &&
      queue.length === 1 &&
      queue[0]?.length === length
    );
  }

  /** `length` bytes of the head left in a DATA frame. */
  sent(length: number): void {
    this.adjust -= length;
    const queue = this.queue;
    const head = queue?.[0];
    if (queue === undefined || head === undefined) return;
    if (length === head.length) queue.shift();
    else queue[0] = head.subarray(length);
  }

  /** Takes the ending once the queue is empty. */
  takeEnding(): DataEnding {
    const ending = this.pendingEnding;
    this.pendingEnding = undefined;
    return ending;
  }

  /** Bytes queued and not yet sent. */
  get queuedBytes(): number {
    let bytes = 0;
    for (const chunk of this.queue ?? []) bytes += chunk.length;
    return bytes;
  }

  /** The stream closed: what was queued is dropped. */
  drop(): void {
    this.queue = undefined;
    this.pendingEnding = undefined;
  }
}
