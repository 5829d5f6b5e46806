// Pieces of the gRPC protocol the front end implements itself.
import { status } from '@grpc/grpc-js';
import {
  CallError,
  encodeStatusMessage,
  parseTimeout,
  singleMessage,
} from '../../../src/server/grpc/protocol';

describe('parseTimeout', () => {
  it.each([
    ['20m', 20],
    ['1S', 1000],
    ['2M', 120_000],
    ['1H', 3_600_000],
    ['1500u', 1.5],
    ['99999999n', 99.999999],
  ])('reads %s as %d ms', (header, ms) => {
    expect(parseTimeout(header)).toBeCloseTo(ms, 9);
  });

  it.each([undefined, '', '20', 'm', '123456789m', '1.5S', '-1S', '20x'])(
    'ignores %p, as gRPC does a header it cannot read',
    (header) => {
      expect(parseTimeout(header)).toBeUndefined();
    },
  );
});

describe('encodeStatusMessage', () => {
  it('leaves printable ASCII alone', () => {
    expect(encodeStatusMessage('unknown service x: a/b ~ok')).toBe('unknown service x: a/b ~ok');
  });

  it('percent-encodes %, control characters and UTF-8 bytes', () => {
    expect(encodeStatusMessage('50% é\n')).toBe('50%25 %C3%A9%0A');
  });
});

describe('singleMessage', () => {
  it('finds the one message and whether it is compressed', () => {
    const body = Buffer.from([1, 0, 0, 0, 2, 0xaa, 0xbb]);
    expect(singleMessage(body, 4 * 1024 * 1024)).toEqual({
      isCompressed: true,
      buf: body,
      start: 5,
      end: 7,
    });
  });

  it.each([
    ['a flag other than 0 or 1', [2, 0, 0, 0, 0], status.INTERNAL],
    ['a header cut short', [0, 0, 0], status.INTERNAL],
    ['a length past MAX_REQUEST_BYTES', [0, 0, 0x50, 0, 0], status.RESOURCE_EXHAUSTED],
  ])('refuses %s', (_name, bytes, code) => {
    let caught: unknown;
    try {
      singleMessage(Buffer.from(bytes), 4 * 1024 * 1024);
    } catch (err: unknown) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CallError);
    expect((caught as CallError).code).toBe(code);
  });
});
