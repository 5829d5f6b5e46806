// The memcached store's pure parts: key rules, the checksum, SRV ordering and address parsing.
import { parseHostPort } from '../../../src/store/memcached/address';
import {
  decrementRequest,
  getRequest,
  incrementRequest,
  parseResponse,
  storedValue,
} from '../../../src/store/memcached/binary-protocol';
import { MAX_KEY_BYTES, unstorableKeyReason } from '../../../src/store/memcached/key-rules';
import { crc32, serverIndexFor } from '../../../src/store/memcached/server-selection';
import { isSrvName, resolveServers, serverAddresses } from '../../../src/store/memcached/srv';

describe('key rules', () => {
  it('accepts what memcached stores, UTF-8 included', () => {
    expect(unstorableKeyReason('domain_key_value_1700000000')).toBeUndefined();
    expect(unstorableKeyReason('x'.repeat(MAX_KEY_BYTES))).toBeUndefined();
    expect(unstorableKeyReason('d_k_été_1')).toBeUndefined();
  });

  it('counts bytes, not characters', () => {
    // 125 two-byte characters are 250 bytes; one more is too many.
    expect(unstorableKeyReason('é'.repeat(125))).toBeUndefined();
    expect(unstorableKeyReason('é'.repeat(126))).toBe(
      'is 252 bytes long; memcached keys are at most 250 bytes',
    );
  });

  it.each([
    ['a b', 'contains a space at position 1'],
    ['a\nb', 'contains control character 0x0a at position 1'],
    ['\u0000', 'contains control character 0x00 at position 0'],
    ['a\u007f', 'contains control character 0x7f at position 1'],
  ])('refuses %j', (key, start) => {
    expect(unstorableKeyReason(key)).toBe(
      `${start}; memcached keys may not contain spaces or control characters`,
    );
  });
});

describe('server selection', () => {
  it.each([
    ['', 0],
    ['123456789', 0xcbf43926],
    ['d_k_été_1', 2159907353],
    ['x'.repeat(300), 457387283],
  ])('computes the IEEE CRC-32 of the UTF-8 bytes of %j', (key, expected) => {
    expect(crc32(key)).toBe(expected);
  });

  it('always picks the one server of a list of one', () => {
    expect(serverIndexFor('a', 1)).toBe(0);
    expect(serverIndexFor('a', 3)).toBe(3904355907 % 3);
  });
});

describe('SRV answers', () => {
  it("orders targets as the reference does: fully qualified, sorted as Go's sort.Strings", () => {
    // Without the trailing dot "a.b:1" would sort after "a.b.c:1" (':' > '.'); with it, before.
    expect(
      serverAddresses([
        { name: 'a.b.c', port: 1 },
        { name: 'a.b', port: 1 },
        { name: 'a.a.', port: 2 },
      ]),
    ).toEqual(['a.a.:2', 'a.b.:1', 'a.b.c.:1']);
  });

  it('reads names as _service._proto.name and refuses empty answers', async () => {
    expect(isSrvName('_memcache._tcp.example.com')).toBe(true);
    expect(isSrvName('memcache.example.com')).toBe(false);
    await expect(resolveServers('_m._tcp.x', () => Promise.resolve([]))).rejects.toThrow(
      'the SRV record _m._tcp.x lists no servers',
    );
    await expect(resolveServers('nope', () => Promise.resolve([]))).rejects.toThrow(
      'could not parse nope to SRV parts',
    );
  });
});

describe('addresses', () => {
  it('parses host:port, [ipv6]:port and resolved names with the root dot', () => {
    expect(parseHostPort('cache:11211')).toEqual({ host: 'cache', port: 11211 });
    expect(parseHostPort('[::1]:11211')).toEqual({ host: '::1', port: 11211 });
    expect(parseHostPort('cache.ns.svc.:11211')).toEqual({ host: 'cache.ns.svc', port: 11211 });
    expect(parseHostPort('cache')).toBeUndefined();
    expect(parseHostPort('cache:0')).toBeUndefined();
  });
});

describe('binary protocol', () => {
  it('writes an increment as header, 20 bytes of extras and the UTF-8 key', () => {
    const request = incrementRequest('é', 3, 60);
    expect(request.toString('hex')).toBe(
      [
        '80050002', // magic, opcode, key length 2
        '14000000', // extras 20, data type, vbucket
        '00000016', // body 22
        '00000000', // opaque (the connection numbers it)
        '0000000000000000', // CAS
        '0000000000000003', // amount
        '0000000000000003', // initial
        '0000003c', // expiry
        'c3a9', // key
      ].join(''),
    );
  });

  it('asks a decrement not to create a missing key, and a get for the key alone', () => {
    expect(decrementRequest('k', 1).subarray(40, 44).toString('hex')).toBe('ffffffff');
    expect(getRequest('k').toString('hex')).toBe(`800000010000000000000001${'0'.repeat(24)}6b`);
  });

  it('reads a response once it is whole, past its extras and key', () => {
    const response = Buffer.from(
      `81000000040000000000000600000007${'0'.repeat(16)}deadbeef3432ff`,
      'hex',
    );
    expect(parseResponse(response.subarray(0, 29))).toBeUndefined();
    const parsed = parseResponse(response);
    expect(parsed?.bytes).toBe(30);
    expect(parsed?.response.opaque).toBe(7);
    expect(parsed?.response.value.toString('hex')).toBe('3432');
    if (parsed !== undefined) expect(storedValue(parsed.response)).toBe(42);
  });

  it('refuses bytes that are not a response', () => {
    expect(() => parseResponse(Buffer.alloc(24))).toThrow(
      'a reply did not start with the response magic (0x0)',
    );
  });
});
