import { ConnectionError } from '../../../../src/server/h2/frames';
import { FrameReader } from '../../../../src/server/h2/reader';

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

it('refuses a wrong preface at its first wrong byte, and frames past the size limit', () => {
  expect(() => {
    reader().read.read(Buffer.from('PRI * HTTP/1.1'));
  }).toThrow(ConnectionError);
  const big = reader();
  expect(() => {
    big.read.read(Buffer.concat([PREFACE, frame(0, 1, Buffer.alloc(16_385))]));
  }).toThrow(/exceeds SETTINGS_MAX_FRAME_SIZE/);
});
