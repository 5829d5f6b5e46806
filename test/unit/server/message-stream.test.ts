import { MessageStream } from '../../../src/server/grpc/message-stream';
import { frame } from '../../helpers/h2-raw';

/**
 * Pushes `body` in pieces of `size` through one buffer overwritten after every push, as the own
 * HTTP/2 reuses its read buffer; each message is read during the push that completes it.
 */
function messagesOf(body: Buffer, size: number): string[] {
  const stream = new MessageStream(undefined, 1024);
  const shared = Buffer.alloc(size);
  const seen: string[] = [];
  for (let at = 0; at < body.length; at += size) {
    const length = body.copy(shared, 0, at, at + size);
    for (const m of stream.push(shared.subarray(0, length))) {
      seen.push(m.buf.toString('latin1', m.start, m.end));
    }
    shared.fill(0xa5);
  }
  expect(stream.isCut).toBe(false);
  return seen;
}

const texts = ['one', 'a longer second message', '', 'x'.repeat(300), 'last'];
const body = Buffer.concat(texts.map((t) => frame(Buffer.from(t, 'latin1'))));

it('keeps a copy of an unfinished message only: a chunk may be overwritten once pushed', () => {
  for (const size of [1, 2, 5, 7, 64, 299, body.length])
    expect(messagesOf(body, size)).toEqual(texts);
});

it('reads whole messages from the chunk itself, copying nothing', () => {
  const stream = new MessageStream(undefined, 1024);
  const from = jest.spyOn(Buffer, 'from');
  const concat = jest.spyOn(Buffer, 'concat');
  try {
    const messages = stream.push(body);
    expect(messages.map((m) => m.buf.buffer === body.buffer)).toEqual(texts.map(() => true));
    expect(from).not.toHaveBeenCalled();
    expect(concat).not.toHaveBeenCalled();
  } finally {
    from.mockRestore();
    concat.mockRestore();
  }
});

it('reads a message sent a byte at a time in time linear in its length', () => {
  // Joining the held chunks again for every chunk made 256 KiB in one-byte chunks take about
  // 30 s on the machine this was written on; once each byte is copied once, about 0.3 s.
  const length = 256 * 1024;
  const body = frame(Buffer.alloc(length, 0x61));
  const stream = new MessageStream(undefined, 1024 * 1024);
  const one = Buffer.alloc(1);
  const started = performance.now();
  const lengths: number[] = [];
  for (let at = 0; at < body.length; at++) {
    one[0] = body[at] ?? 0;
    for (const m of stream.push(one)) lengths.push(m.end - m.start);
    if (at === body.length - 2) expect(stream.heldBytes).toBe(body.length - 1);
  }
  expect(performance.now() - started).toBeLessThan(3000);
  expect(lengths).toEqual([length]);
  expect(stream.isCut).toBe(false);
});

it('lets an unfinished message go when told, holding nothing after', () => {
  const stream = new MessageStream(undefined, 1024 * 1024);
  const body = frame(Buffer.alloc(10_000, 0x62));
  expect(stream.push(body.subarray(0, 6000))).toEqual([]);
  expect(stream.heldBytes).toBe(6000);
  stream.release();
  expect(stream.heldBytes).toBe(0);
  expect(stream.isCut).toBe(false);
  // What follows starts a message afresh.
  const next = frame(Buffer.from('next', 'latin1'));
  expect(stream.push(next).map((m) => m.buf.toString('latin1', m.start, m.end))).toEqual(['next']);
});

it('refuses a length past the limit as soon as the prefix is in, even split', () => {
  const stream = new MessageStream(undefined, 1024);
  const head = Buffer.from([0, 0, 0, 0x04, 0x01]);
  expect(stream.push(head.subarray(0, 3))).toEqual([]);
  expect(() => stream.push(head.subarray(3))).toThrow(/1024/);
});
