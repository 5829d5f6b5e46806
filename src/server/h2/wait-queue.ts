// A first-in first-out queue of streams, for those waiting on the connection's send window.
import type { H2Stream } from './stream';

export class WaitQueue {
  private items: (H2Stream | undefined)[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(stream: H2Stream): void {
    this.items.push(stream);
  }

  shift(): H2Stream | undefined {
    if (this.head >= this.items.length) return undefined;
    const stream = this.items[this.head];
    this.items[this.head++] = undefined;
    // Served slots are dropped in bulk once they are half the array.
    if (this.head >= 64 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return stream;
  }
}
