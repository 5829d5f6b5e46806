// What requests not yet whole hold (unfinished header blocks and bodies), in bytes and in
// requests, counted across connections, so that many slow clients together cannot make the
// process hoard memory, and no few of them can take what the others need.

/** The total bytes when no setting says otherwise (GRPC_MAX_BUFFERED_BYTES's default). */
export const DEFAULT_BUFFERED_BYTES = 64 * 1024 * 1024;
/** The total requests when no setting says otherwise (GRPC_MAX_BUFFERED_REQUESTS's default). */
export const DEFAULT_BUFFERED_REQUESTS = 10_000;

/**
 * One connection may hold this fraction of each total: four hostile connections take an eighth,
 * and it takes 32 to fill the budget, while the innocent ones keep the rest.
 */
const CONNECTION_SHARE = 32;

export class BufferBudget {
  private held = 0;
  private holders = 0;
  /** What one connection may hold. */
  readonly connectionBytes: number;
  /** Unfinished requests one connection may hold at once. */
  readonly connectionRequests: number;

  /**
   * @param leastConnectionBytes one connection may hold at least this much (one request of the
   * largest size), whatever the share.
   */
  constructor(
    readonly maxBytes: number,
    readonly maxRequests: number = DEFAULT_BUFFERED_REQUESTS,
    leastConnectionBytes = 0,
  ) {
    this.connectionBytes = Math.max(Math.floor(maxBytes / CONNECTION_SHARE), leastConnectionBytes);
    this.connectionRequests = Math.max(1, Math.floor(maxRequests / CONNECTION_SHARE));
  }

  get heldBytes(): number {
    return this.held;
  }

  /** Requests holding bytes now. */
  get heldRequests(): number {
    return this.holders;
  }

  /** Whether `bytes` more, and `requests` more requests, fit the totals. */
  fits(bytes: number, requests: number): boolean {
    return this.held + bytes <= this.maxBytes && this.holders + requests <= this.maxRequests;
  }

  /** Counts `bytes` and `requests`, fitting or not. */
  add(bytes: number, requests: number): void {
    this.held += bytes;
    this.holders += requests;
  }
}

/** The budget of connections opened without one of their own. */
export const processBudget = new BufferBudget(DEFAULT_BUFFERED_BYTES);

/** One connection's part of a budget: at most its share, and only while the totals allow. */
export class ConnectionBudget {
  private held = 0;
  private holders = 0;
  /** giveAll() was called: a stream closing after its connection gives back nothing twice. */
  private isGone = false;

  constructor(private readonly shared: BufferBudget) {}

  /**
   * Takes `bytes` more (fewer, given back, when negative) and `requests` more requests holding
   * them when they fit this connection's share and the totals; false, taking nothing, when
   * they do not. Giving back always succeeds.
   */
  take(bytes: number, requests: number): boolean {
    const isTaking = bytes > 0 || requests > 0;
    if (this.isGone) return !isTaking;
    if (isTaking && !this.fits(bytes, requests)) return false;
    this.add(bytes, requests);
    return true;
  }

  /**
   * Takes `bytes` and `requests` whether they fit or not, for what must be held anyway (a header
   * block the HPACK table must follow); false when they did not fit.
   */
  force(bytes: number, requests: number): boolean {
    const isFitting = this.fits(bytes, requests);
    this.add(bytes, requests);
    return isFitting;
  }

  /** The connection is gone: whatever it still held is given back. */
  giveAll(): void {
    this.isGone = true;
    this.shared.add(-this.held, -this.holders);
    this.held = 0;
    this.holders = 0;
  }

  private fits(bytes: number, requests: number): boolean {
    const { shared } = this;
    return (
      this.held + bytes <= shared.connectionBytes &&
      this.holders + requests <= shared.connectionRequests &&
      shared.fits(bytes, requests)
    );
  }

  private add(bytes: number, requests: number): void {
    this.held += bytes;
    this.holders += requests;
    this.shared.add(bytes, requests);
  }
}
