// Client connections of every listener, bounded in total (MAX_CONNECTIONS) and per peer address
// (MAX_CONNECTIONS_PER_PEER); what is past them is refused at accept, before the listener's own
// handling sees the socket, counted and logged (refusals.ts).
import type net from 'node:net';
import { movedTo } from './h2';
import type { ConnectionRefusal } from './refusals';

export interface GateLimits {
  readonly maxConnections: number;
  readonly maxConnectionsPerPeer: number;
}

/** A peer's open connections, oldest first. */
type PeerSockets = Set<net.Socket>;

/** A full gate looks through every peer for one over its share at most this often. */
const SCAN_EVERY_MS = 1000;

/** The peer a socket comes from: its address; unix socket clients are one peer. */
export function peerOf(socket: net.Socket): string {
  return socket.remoteAddress ?? 'unix';
}

/**
 * The fair share rule (docs/reliability.md, "Fair shares"): while the total has room, a peer
 * may open up to its own limit. Once the total is reached, a peer holding fewer than its fair
 * share (the total divided among the peers, the newcomer counted) still gets in: the oldest
 * connection of a peer holding more than its share is closed for it. Any other connection is
 * refused.
 */
export class ConnectionGate {
  private total = 0;
  private readonly peers = new Map<string, PeerSockets>();
  /** The peer seen holding the most; checked before any scan. */
  private largest: PeerSockets | undefined = undefined;
  private scannedAtMs = -Infinity;

  constructor(
    private readonly limits: GateLimits,
    private readonly onRefused: (reason: ConnectionRefusal, peer: string) => void,
  ) {}

  /** Connections open now, of every guarded listener. */
  get size(): number {
    return this.total;
  }

  /**
   * Puts the gate in front of `server`'s own 'connection' listeners (call it once they are all
   * attached): a refused socket is destroyed and never reaches them.
   */
  guard(server: net.Server): void {
    const own = server.listeners('connection') as ((socket: net.Socket) => void)[];
    server.removeAllListeners('connection');
    server.on('connection', (socket: net.Socket) => {
      if (!this.admit(socket)) {
        socket.destroy();
        return;
      }
      for (const listener of own) listener.call(server, socket);
    });
  }

  /** Counts `socket` in when the bounds allow it (until it closes); false when refused. */
  admit(socket: net.Socket): boolean {
    const peer = peerOf(socket);
    const sockets = this.peers.get(peer);
    const held = sockets?.size ?? 0;
    if (held >= this.limits.maxConnectionsPerPeer) {
      this.onRefused('connections_per_peer', peer);
      return false;
    }
    if (this.total >= this.limits.maxConnections && !this.makeRoom(held, sockets === undefined)) {
      this.onRefused('connections_total', peer);
      return false;
    }
    this.add(peer, sockets, socket);
    return true;
  }

  private add(peer: string, known: PeerSockets | undefined, socket: net.Socket): void {
    const sockets = known ?? new Set<net.Socket>();
    if (known === undefined) this.peers.set(peer, sockets);
    sockets.add(socket);
    this.total += 1;
    if (sockets.size > (this.largest?.size ?? 0)) this.largest = sockets;
    let current = socket;
    const onClose = (): void => {
      // A plaintext gRPC connection's socket was moved to one reading into the shared buffer.
      const moved = movedTo(current);
      if (moved === undefined || moved.closed || !sockets.delete(current)) {
        this.forget(peer, sockets, current);
        return;
      }
      sockets.add(moved);
      current = moved;
      moved.once('close', onClose);
    };
    socket.once('close', onClose);
  }

  /** `socket` no longer counts (closed, or closed for another peer's connection). */
  private forget(peer: string, sockets: PeerSockets, socket: net.Socket): void {
    if (!sockets.delete(socket)) return;
    this.total -= 1;
    if (sockets.size > 0) return;
    this.peers.delete(peer);
    if (this.largest === sockets) this.largest = undefined;
  }

  /**
   * The total is reached: a peer holding `held`, less than its fair share, gets the place of
   * the oldest connection of a peer holding more than its share. False when there is none.
   */
  private makeRoom(held: number, isNewPeer: boolean): boolean {
    const peers = this.peers.size + (isNewPeer ? 1 : 0);
    const share = Math.max(1, Math.floor(this.limits.maxConnections / peers));
    if (held >= share) return false;
    const victim = this.overShare(share);
    if (victim === undefined) return false;
    const oldest = victim.values().next().value;
    if (oldest === undefined) return false;
    const peer = peerOf(oldest);
    this.onRefused('connections_total', peer);
    // Out of the count now: its 'close' comes later.
    this.forget(peer, victim, oldest);
    oldest.destroy();
    return true;
  }

  /** A peer holding more than `share`: the largest seen, or one found by a scan now and then. */
  private overShare(share: number): PeerSockets | undefined {
    if (this.largest !== undefined && this.largest.size > share) return this.largest;
    const now = performance.now();
    if (now - this.scannedAtMs < SCAN_EVERY_MS) return undefined;
    this.scannedAtMs = now;
    let found: PeerSockets | undefined = undefined;
    for (const sockets of this.peers.values()) {
      if (sockets.size > (found?.size ?? share)) found = sockets;
    }
    this.largest = found;
    return found;
  }
}
