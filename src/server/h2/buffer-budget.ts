// What requests not yet whole hold (unfinished header blocks and bodies, and streams whose body
// has not begun), in bytes and in requests, counted across connections, so that many slow
// clients together cannot make the process hoard memory, and no few of them can take what the
// others need.

/** The total bytes when no setting says otherwise (GRPC_MAX_BUFFERED_BYTES's default). */
export const DEFAULT_BUFFERED_BYTES = 64 * 1024 * 1024;
/** The total requests when no setting says otherwise (GRPC_MAX_BUFFERED_REQUESTS's default). */
export const DEFAULT_BUFFERED_REQUESTS = 10_000;

/**
 * One connection may hold this fraction of each total: four hostile connections take an eighth,
 * and it takes 32 to fill the budget, while the innocent ones keep the rest.
 */
const CONNECTION_SHARE = 32;

/** Why the budget refused a take. */
export type BudgetRefusal =
  `${'buffered_bytes' | 'requests'}_${'total' | 'per_peer' | 'per_connection'}`;

/** What the connections of one peer address hold together. */
export class PeerHolding {
  bytes = 0;
  requests = 0;
  /** Connections counting here: the holding is forgotten when the last one is gone. */
  connections = 0;

  constructor(readonly peer: string) {}
}

/** Which of a take's two counts is being checked. */
interface Measure {
  readonly max: number;
  readonly total: number;
  /** Peers holding some of it. */
  readonly peers: number;
}

/**
 * The fair share rule: the first half of a total goes first come, first served, within each
 * connection's share. Past half, a peer gets more only while it holds less than its fair share
 * of that half (the half divided among the peers holding some, the asker counted), so that the
 * peers holding more than their share are refused first and the other half is left to the
 * others. Nothing goes past the total.
 */
function refusalOf(m: Measure, peerHeld: number, amount: number): 'total' | 'per_peer' | undefined {
  const after = m.total + amount;
  if (after > m.max) return 'total';
  if (after <= m.max / 2) return undefined;
  const peers = m.peers + (peerHeld === 0 ? 1 : 0);
  return peerHeld + amount > Math.floor(m.max / 2 / peers) ? 'per_peer' : undefined;
}

export class BufferBudget {
  private held = 0;
  private holders = 0;
  private readonly peerHoldings = new Map<string, PeerHolding>();
  private peersHoldingBytes = 0;
  private peersHoldingRequests = 0;
  /** What one connection may hold. */
  readonly connectionBytes: number;
  /** Unfinished requests one connection may hold at once. */
  readonly connectionRequests: number;
  /** Told of every refusal, with the peer refused (the listeners count and log them). */
  onRefused: (reason: BudgetRefusal, peer: string) => void = () => undefined;

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

  /** Requests holding bytes (or waiting for their body) now. */
  get heldRequests(): number {
    return this.holders;
  }

  /** The holding of `peer`, for one more connection of it (let go with leave()). */
  join(peer: string): PeerHolding {
    let holding = this.peerHoldings.get(peer);
    if (holding === undefined) {
      holding = new PeerHolding(peer);
      this.peerHoldings.set(peer, holding);
    }
    holding.connections += 1;
    return holding;
  }

  /** A connection of `holding` is gone, having given back what it held. */
  leave(holding: PeerHolding): void {
    holding.connections -= 1;
    if (holding.connections === 0 && this.peerHoldings.get(holding.peer) === holding)
      this.peerHoldings.delete(holding.peer);
  }

  /**
   * Whether `bytes` more, and `requests` more requests, of `peer` fit the totals under the fair
   * share rule; the refusal is reported to onRefused.
   */
  admits(peer: PeerHolding, bytes: number, requests: number): boolean {
    if (bytes > 0) {
      const measure = { max: this.maxBytes, total: this.held, peers: this.peersHoldingBytes };
      const refusal = refusalOf(measure, peer.bytes, bytes);
      if (refusal !== undefined) return this.refuse(`buffered_bytes_${refusal}`, peer);
    }
    if (requests > 0) {
      const measure = {
        max: this.maxRequests,
        total: this.holders,
        peers: this.peersHoldingRequests,
      };
      const refusal = refusalOf(measure, peer.requests, requests);
      if (refusal !== undefined) return this.refuse(`requests_${refusal}`, peer);
    }
    return true;
  }

  /** Counts `bytes` and `requests` of `peer`, fitting or not. */
  add(peer: PeerHolding, bytes: number, requests: number): void {
    this.held += bytes;
    this.holders += requests;
    const hadBytes = peer.bytes > 0;
    const hadRequests = peer.requests > 0;
    peer.bytes += bytes;
    peer.requests += requests;
    this.peersHoldingBytes += Number(peer.bytes > 0) - Number(hadBytes);
    this.peersHoldingRequests += Number(peer.requests > 0) - Number(hadRequests);
  }

  /** Reports a refusal: false, for the check to return. */
  refuse(reason: BudgetRefusal, peer: PeerHolding): false {
    this.onRefused(reason, peer.peer);
    return false;
  }
}

/** The budget of connections opened without one of their own. */
export const processBudget = new BufferBudget(DEFAULT_BUFFERED_BYTES);

/** One connection's part of a budget: at most its share, and only while the totals allow. */
export class ConnectionBudget {
  private held = 0;
  private holders = 0;
  /** Streams whose body has not begun, counted in the totals but not the connection's share. */
  private waiting = 0;
  /** giveAll() was called: a stream closing after its connection gives back nothing twice. */
  private isGone = false;
  private readonly peer: PeerHolding;

  /** @param peer the address of the connection's client: its peer in the fair share rule. */
  constructor(
    private readonly shared: BufferBudget,
    peer = 'unknown',
  ) {
    this.peer = shared.join(peer);
  }

  /**
   * Takes `bytes` more (fewer, given back, when negative) and `requests` more requests holding
   * them when they fit this connection's share and the totals; false, taking nothing, when
   * they do not. Giving back always succeeds.
   */
  take(bytes: number, requests: number): boolean {
    const isTaking = bytes > 0 || requests > 0;
    if (this.isGone) return !isTaking;
    if (isTaking && !this.fits(bytes, requests)) return false;
    this.shared.add(this.peer, bytes, requests);
    this.held += bytes;
    this.holders += requests;
    return true;
  }

  /**
   * Takes `bytes` and `requests` whether they fit or not, for what must be held anyway (a header
   * block the HPACK table must follow); false when they did not fit.
   */
  force(bytes: number, requests: number): boolean {
    const isFitting = this.fits(bytes, requests);
    this.shared.add(this.peer, bytes, requests);
    this.held += bytes;
    this.holders += requests;
    return isFitting;
  }

  /**
   * Takes `requests` more (fewer, given back, when negative) streams whose body has not begun,
   * when the totals allow them under the fair share rule; false, taking nothing, when they do
   * not. Not within the connection's own share: a client may send a burst of headers before
   * their bodies (nghttp2 sends HEADERS ahead of DATA), and a body that begins is counted there.
   */
  takeWaiting(requests: number): boolean {
    if (this.isGone) return requests <= 0;
    if (requests > 0 && !this.shared.admits(this.peer, 0, requests)) return false;
    this.shared.add(this.peer, 0, requests);
    this.waiting += requests;
    return true;
  }

  /** The connection is gone: whatever it still held is given back. */
  giveAll(): void {
    if (this.isGone) return;
    this.isGone = true;
    this.shared.add(this.peer, -this.held, -this.holders - this.waiting);
    this.shared.leave(this.peer);
    this.held = 0;
    this.holders = 0;
    this.waiting = 0;
  }

  private fits(bytes: number, requests: number): boolean {
    const { shared, peer } = this;
    if (bytes > 0 && this.held + bytes > shared.connectionBytes)
      return shared.refuse('buffered_bytes_per_connection', peer);
    if (requests > 0 && this.holders + requests > shared.connectionRequests)
      return shared.refuse('requests_per_connection', peer);
    return shared.admits(peer, bytes, requests);
  }
}
