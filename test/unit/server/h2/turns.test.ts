// What one peer address is read in a turn (turns.ts), through the readers of its connections
// driven as the session drives them: a held reader waits its turn with its peer's others.
import { FrameReader } from '../../../../src/server/h2/reader';
import {
  joinPeer,
  leavePeer,
  PEER_TURN_OPENINGS,
  PEER_TURN_WORK,
} from '../../../../src/server/h2/turns';
import { frame, PREFACE, T } from '../../../helpers/h2-frames';

/** A frame's work: DATA of 1,000 bytes counts its 1,009 bytes (more than FRAME_WORK_BYTES). */
const FRAME_WORK = 1009;
/** The frames one peer may be read in a turn: its budget, and the frame that crossed it. */
const PEER_FRAMES = Math.ceil(PEER_TURN_WORK / FRAME_WORK);

/** `count` DATA frames of 1,000 bytes after the preface: about 59 KiB for 60. */
function burst(count: number): Buffer {
  const frames = Array.from({ length: count }, () => frame(T.DATA, 0, 1, Buffer.alloc(1000)));
  return Buffer.concat([PREFACE, ...frames]);
}

/** `count` HEADERS frames of a few bytes, each opening a stream: 256 bytes of work each. */
function openings(count: number): Buffer {
  const frames = Array.from({ length: count }, (_, i) =>
    frame(T.HEADERS, 0, 2 * i + 1, Buffer.from([0x82])),
  );
  return Buffer.concat([PREFACE, ...frames]);
}

/** One connection's reader, with its own budget of 64 KiB a turn as a session has. */
class Connection {
  read = 0;
  private readonly reader: FrameReader;

  constructor(
    readonly name: string,
    peer: string,
    log: string[],
  ) {
    this.reader = new FrameReader(
      16_384,
      (type) => {
        this.read += 1;
        log.push(name);
        // As the session charges a stream's opening.
        if (type === T.HEADERS) this.reader.chargeOpening(1024);
      },
      64 * 1024,
      peer,
    );
  }

  receive(bytes: Buffer): void {
    this.reader.read(bytes);
    this.waitIfHeld();
  }

  resumeTurn(): void {
    this.reader.resume();
    this.waitIfHeld();
  }

  get isHeld(): boolean {
    return this.reader.isHeld;
  }

  private waitIfHeld(): void {
    if (this.reader.isHeld) this.reader.waitTurn(this);
  }

  close(): void {
    this.reader.leavePeer();
  }
}

/** The next loop iteration: the turn of what was read in this one has ended. */
function nextIteration(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Loop iterations, each ending a turn, while any of `connections` is held (20 at most); the
 * frames read in each.
 */
async function iterateWhileHeld(
  connections: readonly Connection[],
  log: readonly string[],
): Promise<number[]> {
  const perIteration: number[] = [];
  for (let i = 0; i < 20 && connections.some((c) => c.isHeld); i++) {
    const before = log.length;
    await nextIteration();
    perIteration.push(log.length - before);
  }
  return perIteration;
}

/** Frames read per connection name in the entries of `log` from `from` on. */
function counts(log: readonly string[], from: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of log.slice(from)) out[name] = (out[name] ?? 0) + 1;
  return out;
}

function sum(record: Record<string, number>, prefix: string): number {
  return Object.entries(record)
    .filter(([name]) => name.startsWith(prefix))
    .reduce((total, [, count]) => total + count, 0);
}

it('reads one peer its budget an iteration, however many connections it has; another peer is not held', async () => {
  await nextIteration();
  const log: string[] = [];
  // 60 frames each (under a connection's own 64 KiB), twice the peer's budget in all.
  const count = Math.ceil((2 * PEER_FRAMES) / 60) + 1;
  const many = Array.from(
    { length: count },
    (_, i) => new Connection(`a${String(i)}`, '192.0.2.1', log),
  );
  const light = new Connection('b', '192.0.2.2', log);
  try {
    // One poll phase: all read at once, the other peer's connection last.
    for (const connection of many) connection.receive(burst(60));
    light.receive(burst(10));
    const first = counts(log, 0);
    // Its budget, crossed by a frame at most: the first connections read whole, then one cut
    // short, and the rest not at all.
    expect(sum(first, 'a')).toBeLessThanOrEqual(PEER_FRAMES);
    expect(sum(first, 'a')).toBeGreaterThanOrEqual(PEER_FRAMES - 1);
    const whole = Math.floor(sum(first, 'a') / 60);
    expect(many.map((c) => c.read)).toEqual(
      many.map((_, i) => (i < whole ? 60 : i === whole ? sum(first, 'a') % 60 : 0)),
    );
    expect(first.b).toBe(10);
    expect(light.isHeld).toBe(false);

    // Then an iteration at a time, each reading the peer its budget at most, until all is read.
    const perIteration = await iterateWhileHeld(many, log);
    expect(many.map((c) => c.read)).toEqual(many.map(() => 60));
    expect(Math.max(...perIteration)).toBeLessThanOrEqual(PEER_FRAMES);
    expect(perIteration.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
  } finally {
    for (const connection of [...many, light]) connection.close();
  }
});

it('opens a peer PEER_TURN_OPENINGS streams an iteration, however little their bytes', async () => {
  await nextIteration();
  const log: string[] = [];
  // 50 openings a connection, about 63 KiB of work with their charge: under its own budget.
  const many = Array.from(
    { length: 8 },
    (_, i) => new Connection(`h${String(i)}`, '192.0.2.5', log),
  );
  try {
    for (const connection of many) connection.receive(openings(50));
    expect(log.length).toBe(PEER_TURN_OPENINGS);
    const perIteration = await iterateWhileHeld(many, log);
    expect(many.map((c) => c.read)).toEqual(many.map(() => 50));
    expect(Math.max(...perIteration)).toBe(PEER_TURN_OPENINGS);
  } finally {
    for (const connection of many) connection.close();
  }
});

it('takes turns in order: one held again goes behind those not reached, and a newcomer waits', async () => {
  await nextIteration();
  const log: string[] = [];
  // 100 frames each, past a connection's own 64 KiB a turn (65 frames).
  const first = Array.from(
    { length: 4 },
    (_, i) => new Connection(`c${String(i)}`, '192.0.2.3', log),
  );
  const late = new Connection('late', '192.0.2.3', log);
  try {
    for (const connection of first) connection.receive(burst(100));
    // c0 is held by its own budget; the others of its peer wait behind it, unread.
    expect(first.map((c) => c.read)).toEqual([65, 0, 0, 0]);
    // A newcomer of the same peer with a single frame waits behind them too.
    late.receive(burst(1));
    expect(late.read).toBe(0);
    expect(late.isHeld).toBe(true);
    const from = log.length;
    const perIteration = await iterateWhileHeld([...first, late], log);
    expect(Math.max(...perIteration)).toBeLessThanOrEqual(PEER_FRAMES);
    // The first iteration ends the poll phase's turn: c0 finishes, c1 and c2 are held again by
    // their own budgets, c3 by the peer's, and the newcomer, not reached, goes first in the next.
    const order = log.slice(from).filter((name, i, all) => all[i - 1] !== name);
    expect(order).toEqual(['c0', 'c1', 'c2', 'c3', 'late', 'c1', 'c2', 'c3']);
    expect([...first, late].map((c) => c.read)).toEqual([100, 100, 100, 100, 1]);
  } finally {
    for (const connection of [...first, late]) connection.close();
  }
});

it('keeps a peer’s record while it has connections, and forgets it after the last', () => {
  const one = joinPeer('192.0.2.4');
  const two = joinPeer('192.0.2.4');
  expect(two).toBe(one);
  leavePeer(one);
  expect(joinPeer('192.0.2.4')).toBe(one);
  leavePeer(one);
  leavePeer(one);
  const fresh = joinPeer('192.0.2.4');
  expect(fresh).not.toBe(one);
  leavePeer(fresh);
});
