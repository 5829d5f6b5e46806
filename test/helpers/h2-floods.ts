// The HTTP/2 floods a hostile client can send, as raw bytes: each costs the client little and
// the server much unless the server bounds it. Used by the quick tests of the cut and by the
// measurement run that compares the innocent client's latency against node:http2.
import { END_HEADERS, END_STREAM, frame, PREFACE, request, settings, T, words } from './h2-frames';

const INITIAL_WINDOW_SIZE = 0x4;
const HEADER_TABLE_SIZE = 0x1;

/** The preface and an empty SETTINGS, or one with the given entries. */
export function opening(...entries: (readonly [number, number])[]): Buffer {
  return Buffer.concat([PREFACE, frame(T.SETTINGS, 0, 0, settings(...entries))]);
}

/**
 * `count` streams whose answers wait on a zero window (the client's initial window is 0): each
 * a header block with END_STREAM, or followed by `body` in one DATA frame with END_STREAM.
 */
export function blockedStreams(
  count: number,
  headerBlock: Buffer = request('/', [['reply-bytes', '100']]),
  body?: Buffer,
): Buffer {
  const frames = [frame(T.SETTINGS, 0, 0, settings([INITIAL_WINDOW_SIZE, 0]))];
  for (let i = 0; i < count; i++) {
    const id = 2 * i + 1;
    if (body === undefined)
      frames.push(frame(T.HEADERS, END_HEADERS | END_STREAM, id, headerBlock));
    else
      frames.push(
        frame(T.HEADERS, END_HEADERS, id, headerBlock),
        frame(T.DATA, END_STREAM, id, body),
      );
  }
  return Buffer.concat(frames);
}

/** Connection-level WINDOW_UPDATEs of one byte each. */
export function windowUpdateFlood(count: number): Buffer {
  return Buffer.concat(Array.from({ length: count }, () => frame(T.WINDOW_UPDATE, 0, 0, words(1))));
}

/** SETTINGS frames moving the initial window up and down. */
export function initialWindowFlood(count: number): Buffer {
  return Buffer.concat(
    Array.from({ length: count }, (_, i) =>
      frame(T.SETTINGS, 0, 0, settings([INITIAL_WINDOW_SIZE, i % 2])),
    ),
  );
}

/** One SETTINGS frame of `entries` entries. */
export function largeSettings(entries: number): Buffer {
  const pairs = Array.from({ length: entries }, () => [HEADER_TABLE_SIZE, 4096] as const);
  return frame(T.SETTINGS, 0, 0, settings(...pairs));
}

/** PING or empty SETTINGS frames, each asking for an acknowledgement. */
export function ackFlood(kind: 'ping' | 'settings', count: number): Buffer {
  const one = kind === 'ping' ? frame(T.PING, 0, 0, Buffer.alloc(8)) : frame(T.SETTINGS, 0, 0);
  return Buffer.concat(Array.from({ length: count }, () => one));
}

/** An HPACK integer with an N-bit prefix whose other bits are `first` (RFC 7541 5.1). */
function hpackInt(value: number, prefixBits: number, first: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([first | value]);
  const out = [first | max];
  let rest = value - max;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
  return Buffer.from(out);
}

/**
 * Header blocks past a header list limit, on streams from `firstId`: an HPACK bomb (one 4 KB
 * entry, then `bytes` one-byte references to it) when `kind` is 'bomb', else one literal of
 * `bytes` bytes. Split into HEADERS and CONTINUATION frames of 16 KB.
 */
export function oversizedBlocks(
  kind: 'bomb' | 'literal',
  count: number,
  bytes: number,
  firstId = 1,
): Buffer {
  const name = Buffer.from([0x01, 0x78]); // "x", no Huffman
  const body =
    kind === 'bomb'
      ? Buffer.concat([
          Buffer.from([0x40]), // with incremental indexing: it becomes index 62
          name,
          hpackInt(4000, 7, 0),
          Buffer.alloc(4000, 0x61),
          Buffer.alloc(bytes, 0xbe),
        ])
      : Buffer.concat([
          Buffer.from([0x00]),
          name,
          hpackInt(bytes, 7, 0),
          Buffer.alloc(bytes, 0x61),
        ]);
  const block = Buffer.concat([request(), body]);
  const frames: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const id = firstId + 2 * i;
    frames.push(frame(T.HEADERS, END_STREAM, id, block.subarray(0, 16_000)));
    for (let at = 16_000; at < block.length; at += 16_000) {
      const end = Math.min(block.length, at + 16_000);
      const flags = end === block.length ? END_HEADERS : 0;
      frames.push(frame(T.CONTINUATION, flags, id, block.subarray(at, end)));
    }
  }
  return Buffer.concat(frames);
}

/** A header block left unfinished in `count` one-byte CONTINUATION frames. */
export function continuationFlood(count: number, id = 1): Buffer {
  const frames = [frame(T.HEADERS, 0, id, request())];
  for (let i = 0; i < count; i++) frames.push(frame(T.CONTINUATION, 0, id, Buffer.from([0x00])));
  return Buffer.concat(frames);
}

/** `streams` requests whose bodies stop short of their end after `bytes` bytes each. */
export function unfinishedBodies(
  streams: number,
  bytes: number,
  headerBlock: Buffer = request('/hold'),
): Buffer {
  const frames: Buffer[] = [];
  for (let i = 0; i < streams; i++) {
    const id = 1 + 2 * i;
    frames.push(frame(T.HEADERS, END_HEADERS, id, headerBlock));
    for (let sent = 0; sent < bytes; sent += 16_384) {
      frames.push(frame(T.DATA, 0, id, Buffer.alloc(Math.min(16_384, bytes - sent), 0x61)));
    }
  }
  return Buffer.concat(frames);
}

/** `count` calls each reset (RST_STREAM CANCEL) right after its HEADERS: the rapid reset. */
export function rapidReset(count: number, headerBlock: Buffer = request()): Buffer {
  const frames: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const id = 1 + 2 * i;
    frames.push(
      frame(T.HEADERS, END_HEADERS, id, headerBlock),
      frame(T.RST_STREAM, 0, id, words(0x8)),
    );
  }
  return Buffer.concat(frames);
}

/** One flood of the rig: what each attacking connection sends after its opening SETTINGS. */
export interface Flood {
  readonly name: string;
  /** Sent once per connection after the preface and SETTINGS. */
  readonly opening?: Buffer;
  /** Sent again and again while the connection stays open, on new streams each time. */
  readonly repeat: Buffer;
  /** Connections at a time. */
  readonly width: number;
  /** `repeat` is sent once: the connection then holds what it sent. */
  readonly once?: boolean;
  /** false: the attacker never reads what the server sends. */
  readonly isReading?: boolean;
}

/** The floods of the reliability rig, over calls with the header block `call` and `body`. */
export function rigFloods(call: Buffer, body: Buffer): readonly Flood[] {
  return [
    {
      name: 'WINDOW_UPDATE(0,+1) flood, 1,000 streams blocked on a zero window',
      width: 1,
      opening: blockedStreams(1000, call, body),
      repeat: windowUpdateFlood(5000),
    },
    {
      name: 'WINDOW_UPDATE(0,+1) flood, 4 connections of 1,000 streams blocked on a zero window',
      width: 4,
      opening: blockedStreams(1000, call, body),
      repeat: windowUpdateFlood(5000),
    },
    {
      name: 'SETTINGS moving INITIAL_WINDOW_SIZE, 1,000 blocked streams',
      width: 1,
      opening: blockedStreams(1000, call, body),
      repeat: initialWindowFlood(500),
    },
    { name: 'SETTINGS of 2,730 entries', width: 1, repeat: largeSettings(2730) },
    { name: 'PING flood, never read', width: 1, isReading: false, repeat: ackFlood('ping', 4000) },
    {
      name: 'SETTINGS flood, never read',
      width: 1,
      isReading: false,
      repeat: ackFlood('settings', 4000),
    },
    {
      name: 'header blocks past the list limit (100 KB literal)',
      width: 1,
      repeat: oversizedBlocks('literal', 10, 100_000),
    },
    {
      name: 'HPACK bomb (120,000 references to a 4 KB entry)',
      width: 1,
      repeat: oversizedBlocks('bomb', 10, 120_000),
    },
    { name: 'RST_STREAM rapid reset', width: 1, repeat: rapidReset(1000, call) },
    {
      name: '20 connections, unfinished blocks of 130,000 one-byte CONTINUATION frames',
      width: 20,
      once: true,
      repeat: continuationFlood(130_000),
    },
    {
      name: '50 connections, 4 unfinished 1 MiB bodies each',
      width: 50,
      once: true,
      repeat: unfinishedBodies(4, 1024 * 1024, call),
    },
  ];
}
