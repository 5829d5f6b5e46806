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
