// The turns of the event loop in which connections are read, and what one peer address may be
// read in a turn. A connection's own budget (session.ts) and the share every connection gets
// once all together were read enough (reader.ts) bound a turn by connections; neither bounds
// it when one client opens many connections at once. 500 connections from one address, each
// opening 50 streams, had 814 to 2,250 streams opened in one turn, 50 to 110 ms while V8 had
// not yet optimized that code, and a call on another peer's connection waited for all of it.
// Counted by peer, the turn is bounded whatever the number of its connections: a peer past its
// budget is held, its connections take their turns in order, and the other peers are read.

/**
 * The work (frame bytes, at least FRAME_WORK_BYTES a frame, and what is charged for opening a
 * stream or handling a quota usage) all connections of one peer address are read in a turn:
 * about 4 ms of a core. A load generator with 64 calls in flight sends about 100 KiB a turn, and
 * the bench's 10 RLQS connections about 170 KiB a round of reports: neither is held by it.
 */
export const PEER_TURN_WORK = 256 * 1024;

/**
 * Streams all connections of one peer address open in a turn. Opening one is the costly part of
 * a call, and most costly while that code is cold, as it is in a flood of them: 45 to 100 µs
 * each measured, so 128 take 6 to 13 ms. A client with 64 calls in flight opens at most 64 a
 * turn.
 */
export const PEER_TURN_OPENINGS = 128;

/** A connection whose reading was held, waiting for its next turn. */
export interface TurnTaker {
  /** Reads what waited, until its budget or its peer's is spent. */
  resumeTurn(): void;
}

/** The turn being read, and what all connections together were read in it. */
export const now = {
  turn: 0,
  /** Frame bytes read in this turn, all connections together. */
  frameBytes: 0,
};

/** What the connections of one peer address were read in a turn, and which wait for the next. */
export class PeerTurn {
  /** The turn `spent` counts; an older one means nothing was read in this turn yet. */
  turn = -1;
  spent = 0;
  /** Streams opened in the turn. */
  openings = 0;
  /** Connections of this address: the record is forgotten when the last one is gone. */
  connections = 0;
  /** Held connections, in the order they take their turns. */
  waiting: TurnTaker[] = [];

  /**
   * @param budget the work its connections are read in a turn, all together.
   * @param maxOpenings the streams they open in a turn, all together.
   */
  constructor(
    readonly peer: string,
    readonly budget = PEER_TURN_WORK,
    private readonly maxOpenings = PEER_TURN_OPENINGS,
  ) {}

  /** What this peer was read in the current turn. */
  spentNow(): number {
    if (this.turn !== now.turn) {
      this.turn = now.turn;
      this.spent = 0;
      this.openings = 0;
    }
    return this.spent;
  }

  /** A stream was opened (in the current turn, spentNow() having been read in it). */
  opened(): void {
    this.openings += 1;
    // Its turn is over: the readers check `spent` after every frame, and this ends it there.
    if (this.openings >= this.maxOpenings) this.spent = Math.max(this.spent, this.budget);
  }

  get isSpent(): boolean {
    return this.spentNow() >= this.budget;
  }

  /**
   * Whether a connection of this peer that was not held must wait: the budget is spent, or
   * others wait already, who go first.
   */
  get mustWait(): boolean {
    return this.waiting.length > 0 || this.isSpent;
  }
}

const peers = new Map<string, PeerTurn>();
/** Peers with connections waiting for a turn. */
let waitingPeers = new Set<PeerTurn>();
let isScheduled = false;

/** The record of `peer`, for one more connection of it (let go with leavePeer()). */
export function joinPeer(peer: string): PeerTurn {
  let record = peers.get(peer);
  if (record === undefined) {
    record = new PeerTurn(peer);
    peers.set(peer, record);
  }
  record.connections += 1;
  return record;
}

/** A connection of `record` is gone. */
export function leavePeer(record: PeerTurn): void {
  record.connections -= 1;
  if (record.connections === 0 && peers.get(record.peer) === record) peers.delete(record.peer);
}

/** Something was read in this turn: the next one starts at the next check phase. */
export function countTurn(): void {
  if (isScheduled) return;
  isScheduled = true;
  setImmediate(nextTurn);
}

/** `taker`, held, is read again in a later turn, after its peer's connections held before it. */
export function waitTurn(record: PeerTurn, taker: TurnTaker): void {
  record.waiting.push(taker);
  waitingPeers.add(record);
  countTurn();
}

/**
 * The end of a turn: every peer's held connections are read in order while what is left of its
 * budget lasts; those not reached keep their place at the front, those held again go to the
 * back. Then the next turn begins, so that a loop iteration (the reads of its poll phase and
 * the held connections read after them) reads a peer's budget once, not twice.
 */
function nextTurn(): void {
  isScheduled = false;
  const round = waitingPeers;
  waitingPeers = new Set();
  for (const record of round) {
    const takers = record.waiting;
    record.waiting = [];
    let next = 0;
    while (next < takers.length && !record.isSpent) {
      (takers[next] as TurnTaker).resumeTurn();
      next += 1;
    }
    if (next < takers.length) {
      record.waiting = takers.slice(next).concat(record.waiting);
      waitingPeers.add(record);
      countTurn();
    }
  }
  now.turn += 1;
  now.frameBytes = 0;
}
