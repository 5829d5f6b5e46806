import { ConnectionError } from '../../../../src/server/h2/frames';
import { FRAME_WORK_BYTES, FrameReader } from '../../../../src/server/h2/reader';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

function frame(type: number, stream: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

interface Seen {
  readonly type: number;
  readonly stream: number;
  readonly payload: string;
}

function reader(): { read: FrameReader; seen: Seen[] } {
  const seen: Seen[] = [];
  const read = new FrameReader(16_384, (type, _flags, stream, payload) => {
    seen.push({ type, stream, payload: payload.toString('latin1') });
  });
  return { read, seen };
}

const bytes = Buffer.concat([
  PREFACE,
  frame(4, 0, Buffer.alloc(0)),
  frame(0, 1, Buffer.from('first')),
  frame(0, 3, Buffer.alloc(16_384, 0x62)),
]);
const expected: Seen[] = [
  { type: 4, stream: 0, payload: '' },
  { type: 0, stream: 1, payload: 'first' },
  { type: 0, stream: 3, payload: 'b'.repeat(16_384) },
];

it('reads the same frames whether they come at once, byte by byte, or in odd pieces', () => {
  const whole = reader();
  whole.read.read(bytes);
  expect(whole.seen).toEqual(expected);

  const trickled = reader();
  for (let i = 0; i < bytes.length; i++) trickled.read.read(bytes.subarray(i, i + 1));
  expect(trickled.seen).toEqual(expected);

  const pieces = reader();
  for (let i = 0; i < bytes.length; i += 7_001) pieces.read.read(bytes.subarray(i, i + 7_001));
  expect(pieces.seen).toEqual(expected);
});

/**
 * Feeds `input` in pieces of `size` through one buffer overwritten after every read, as the read
 * buffer plaintext connections share is reused: a frame kept as a view would come out wrong.
 */
function readThroughOneBuffer(read: FrameReader, input: Buffer, size: number): void {
  const shared = Buffer.alloc(size);
  for (let at = 0; at < input.length; at += size) {
    const length = input.copy(shared, 0, at, at + size);
    read.read(shared.subarray(0, length));
    shared.fill(0xa5);
  }
}

it('copies what it keeps: a chunk may be overwritten as soon as read() returns', () => {
  for (const size of [1, 5, 9, 10, 24, 25, 7_001, 16_393, 65_536]) {
    const { read, seen } = reader();
    readThroughOneBuffer(read, bytes, size);
    expect(seen).toEqual(expected);
  }
});

/** Sizes of the Buffers allocated (by any means) and joins made while `run` runs. */
function allocations(run: () => void): { sizes: number[]; joins: number } {
  const spies = [
    jest.spyOn(Buffer, 'allocUnsafe'),
    jest.spyOn(Buffer, 'allocUnsafeSlow'),
    jest.spyOn(Buffer, 'alloc'),
  ];
  const concat = jest.spyOn(Buffer, 'concat');
  try {
    run();
    return {
      sizes: spies.flatMap((spy) => spy.mock.calls.map(([size]) => size)),
      joins: concat.mock.calls.length,
    };
  } finally {
    for (const spy of [...spies, concat]) spy.mockRestore();
  }
}

it('copies a cut frame on its own, never joined with the next chunk', () => {
  const { read, seen } = reader();
  const big = Buffer.concat([PREFACE, frame(0, 1, Buffer.alloc(10_000, 0x63))]);
  const cut = frame(0, 5, Buffer.alloc(16_000));
  const second = Buffer.concat([
    big.subarray(100),
    frame(0, 3, Buffer.alloc(16_000)),
    cut.subarray(0, 50),
  ]);
  const made = allocations(() => {
    read.read(big.subarray(0, 100));
    read.read(second);
    read.read(cut.subarray(50));
  });
  // At most a buffer of the largest frame for each cut one, nothing the size of a chunk.
  expect(made.joins).toBe(0);
  expect(made.sizes.every((size) => size <= 16_384 + 9)).toBe(true);
  expect(seen.map((s) => [s.stream, s.payload.length])).toEqual([
    [1, 10_000],
    [3, 16_000],
    [5, 16_000],
  ]);
});

it('reuses the buffers of large cut frames, and allocates small ones from Node’s pool', () => {
  const { read, seen } = reader();
  read.read(PREFACE);
  const large = frame(0, 1, Buffer.alloc(16_000, 0x64));
  const small = frame(0, 3, Buffer.alloc(100, 0x65));
  // Warm: one large cut frame takes a spare buffer (or makes one) and gives it back.
  read.read(large.subarray(0, 10));
  read.read(large.subarray(10));
  const made = allocations(() => {
    for (let i = 0; i < 100; i++) {
      read.read(large.subarray(0, 5_000));
      read.read(large.subarray(5_000));
      read.read(small.subarray(0, 50));
      read.read(small.subarray(50));
    }
  });
  // No buffer of its own per large cut frame; the small ones come from Node's pool.
  expect(made.sizes.filter((size) => size > 4 * 1024)).toEqual([]);
  expect(seen).toHaveLength(201);
  expect(seen.at(-2)?.payload).toBe('d'.repeat(16_000));
  expect(seen.at(-1)?.payload).toBe('e'.repeat(100));
});

it('refuses a wrong preface at its first wrong byte, and frames past the size limit', () => {
  expect(() => {
    reader().read.read(Buffer.from('PRI * HTTP/1.1'));
  }).toThrow(ConnectionError);
  const big = reader();
  expect(() => {
    big.read.read(Buffer.concat([PREFACE, frame(0, 1, Buffer.alloc(16_385))]));
  }).toThrow(/exceeds SETTINGS_MAX_FRAME_SIZE/);
});

describe('a turn budget', () => {
  function budgeted(turnBytes: number): { read: FrameReader; seen: Seen[] } {
    const seen: Seen[] = [];
    const read = new FrameReader(
      16_384,
      (type, _flags, stream, payload) => {
        seen.push({ type, stream, payload: payload.toString('latin1') });
      },
      turnBytes,
    );
    return { read, seen };
  }
  const small = Array.from({ length: 10 }, (_, i) => frame(0, 2 * i + 1, Buffer.from('abcdefg')));
  const expectedSmall = small.map((_, i) => ({ type: 0, stream: 2 * i + 1, payload: 'abcdefg' }));

  it('holds the frames past the budget until resume(), then reads them in order', () => {
    // Each 16-byte frame counts FRAME_WORK_BYTES: a budget of 700 reads three, then holds the rest.
    const { read, seen } = budgeted(700);
    read.read(Buffer.concat([PREFACE, ...small]));
    expect(seen).toHaveLength(3);
    expect(read.isHeld).toBe(true);
    // What comes meanwhile waits behind what is held, even a piece of a frame.
    const late = frame(0, 99, Buffer.from('late'));
    read.read(late.subarray(0, 5));
    expect(seen).toHaveLength(3);
    read.read(late.subarray(5));
    let turns = 1;
    while (read.isHeld && turns < 20) {
      read.resume();
      turns += 1;
    }
    expect(turns).toBe(4);
    expect(seen).toEqual([...expectedSmall, { type: 0, stream: 99, payload: 'late' }]);
  });

  it('counts a small frame as FRAME_WORK_BYTES: a flood of them is read a share at a time', async () => {
    // A turn of its own, so the budget all connections share is not spent already.
    await new Promise((resolve) => setImmediate(resolve));
    const { read, seen } = budgeted(64 * 1024);
    const update = frame(8, 0, Buffer.from([0, 0, 0, 1]));
    read.read(Buffer.concat([PREFACE, ...Array.from({ length: 1000 }, () => update)]));
    // 13-byte WINDOW_UPDATE frames, 5,041 a turn had they counted their bytes.
    expect(seen).toHaveLength((64 * 1024) / FRAME_WORK_BYTES);
    expect(read.isHeld).toBe(true);
  });

  it('counts charged work against the turn, and a resume() with nothing held is harmless', () => {
    const { read, seen } = budgeted(1000);
    read.read(PREFACE);
    read.resume();
    expect(read.isHeld).toBe(false);
    read.charge(990);
    read.read(Buffer.concat(small.slice(0, 2)));
    expect(seen).toHaveLength(1);
    expect(read.isHeld).toBe(true);
    read.resume();
    expect(seen).toEqual(expectedSmall.slice(0, 2));
    expect(read.isHeld).toBe(false);
  });

  it('holds each connection to a share once all together were read 256 KiB in a turn', async () => {
    // A fresh turn: nothing read in this one yet.
    await new Promise<void>((resolve) => setImmediate(resolve));
    // 60 frames of 1,009 bytes: about 59 KiB for each connection, under its own 64 KiB.
    const heavy = Buffer.concat([
      PREFACE,
      ...Array.from({ length: 60 }, (_, i) => frame(0, 2 * i + 1, Buffer.alloc(1000, 0x61))),
    ]);
    const readers = Array.from({ length: 6 }, () => budgeted(64 * 1024));
    for (const { read } of readers) read.read(heavy);
    // The first four are read whole (236 KiB); the fifth until the shared 256 KiB are spent
    // (20 frames, past its share), the sixth only its 16 KiB share (17 frames).
    expect(readers.map(({ seen }) => seen.length)).toEqual([60, 60, 60, 60, 20, 17]);
    // A connection sending less than a share is not held, whatever the others sent.
    const light = budgeted(64 * 1024);
    light.read.read(Buffer.concat([PREFACE, ...small]));
    expect(light.seen).toEqual(expectedSmall);
    expect(light.read.isHeld).toBe(false);
    // The next turn, the held ones go on.
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (const { read } of readers.slice(4)) read.resume();
    expect(readers.map(({ seen }) => seen.length)).toEqual([60, 60, 60, 60, 60, 60]);
  });

  it('copies what waits for a later turn once, however many turns it waits', () => {
    // Each 1,009-byte frame is read in a turn of its own; what waits is read from one copy.
    const { read, seen } = budgeted(1000);
    const frames = Array.from({ length: 50 }, (_, i) => frame(0, 2 * i + 1, Buffer.alloc(1000, i)));
    const chunk = Buffer.concat([PREFACE, ...frames]);
    const first = allocations(() => {
      readThroughOneBuffer(read, chunk, chunk.length);
    });
    expect(first.sizes.filter((size) => size > 100).length).toBeLessThanOrEqual(1);
    const later = allocations(() => {
      for (let turns = 0; read.isHeld && turns < 100; turns++) read.resume();
    });
    expect(later.sizes).toEqual([]);
    expect(later.joins).toBe(0);
    expect(seen.map((s) => s.payload)).toEqual(
      frames.map((_, i) => String.fromCharCode(i).repeat(1000)),
    );
  });

  it('never ends a turn between a header block and the first DATA of its stream', () => {
    // Budget 1: every frame spends the turn. A request sent whole keeps its body with it, or its
    // stream would count as one whose body has not begun (and be refused past its peer's share).
    const { read, seen } = budgeted(1);
    const HEADERS = 1;
    const CONTINUATION = 9;
    const END_HEADERS = 0x4;
    const withFlags = (type: number, flags: number, stream: number): Buffer => {
      const bytes = frame(type, stream, Buffer.from('x'));
      bytes[4] = flags;
      return bytes;
    };
    read.read(
      Buffer.concat([
        PREFACE,
        withFlags(HEADERS, END_HEADERS, 1),
        frame(0, 1, Buffer.from('a')),
        frame(0, 1, Buffer.from('b')),
      ]),
    );
    expect(seen.map((f) => [f.type, f.stream])).toEqual([
      [HEADERS, 1],
      [0, 1],
    ]);
    read.resume();
    // A block not ended (CONTINUATION follows), or DATA of another stream, may wait.
    read.read(
      Buffer.concat([
        withFlags(HEADERS, 0, 3),
        withFlags(CONTINUATION, END_HEADERS, 3),
        frame(0, 5, Buffer.from('c')),
      ]),
    );
    expect(seen.map((f) => f.stream)).toEqual([1, 1, 1, 3]);
    for (let turns = 0; read.isHeld && turns < 10; turns++) read.resume();
    expect(seen.map((f) => f.stream)).toEqual([1, 1, 1, 3, 3, 5]);
  });

  it('never holds the last frame of what it was given', () => {
    const { read, seen } = budgeted(1);
    read.read(Buffer.concat([PREFACE, small[0] as Buffer]));
    expect(seen).toHaveLength(1);
    expect(read.isHeld).toBe(false);
  });
});
