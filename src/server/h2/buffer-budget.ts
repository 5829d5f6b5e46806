// Bytes held for requests not yet whole (unfinished header blocks and bodies), counted across
// connections, so that many slow clients together cannot make the process hoard memory.

/** The total when no setting says otherwise (GRPC_MAX_BUFFERED_BYTES's default). */
export const DEFAULT_BUFFERED_BYTES = 64 * 1024 * 1024;

/** One connection may hold this share of the total, so one client cannot take it all. */
const CONNECTION_SHARE = 4;

export class BufferBudget {
  private held = 0;

  constructor(readonly maxBytes: number) {}

  /** What one connection may hold. */
  get connectionBytes(): number {
    return Math.floor(this.maxBytes / CONNECTION_SHARE);
  }

  get heldBytes(): number {
    return this.held;
  }

  /** Takes `bytes` when they fit; false, taking nothing, when they do not. */
  take(bytes: number): boolean {
    if (this.held + bytes > this.maxBytes) return false;
    this.held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.held -= bytes;
  }
}

/** The budget of connections opened without one of their own. */
export const processBudget = new BufferBudget(DEFAULT_BUFFERED_BYTES);

/** One connection's part of a budget: at most its share, and only while the total allows. */
export class ConnectionBudget {
  private held = 0;

  constructor(private readonly shared: BufferBudget) {}

  take(bytes: number): boolean {
    if (this.held + bytes > this.shared.connectionBytes || !this.shared.take(bytes)) return false;
    this.held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.held -= bytes;
    this.shared.give(bytes);
  }

  /** The connection is gone: whatever it still held is given back. */
  giveAll(): void {
    this.shared.give(this.held);
    this.held = 0;
  }
}
