import { decodeHuffman, huffmanCode } from '../../../../src/server/h2/huffman';
import { HpackDecoder } from '../../../../src/server/h2/hpack';
import { encodeHeaderBlock } from '../../../../src/server/h2/hpack-encoder';
import { HpackError } from '../../../../src/server/h2/hpack-error';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s/g, ''), 'hex');

describe('Huffman code (RFC 7541 Appendix B)', () => {
  it('derives the codes the RFC lists from the code lengths', () => {
    // A sample across lengths 5 to 30, with EOS.
    expect(huffmanCode(0x30)).toEqual({ code: 0x0, bits: 5 }); // '0'
    expect(huffmanCode(0x20)).toEqual({ code: 0x14, bits: 6 }); // ' '
    expect(huffmanCode(0x61)).toEqual({ code: 0x3, bits: 5 }); // 'a'
    expect(huffmanCode(0x7a)).toEqual({ code: 0x7b, bits: 7 }); // 'z'
    expect(huffmanCode(0x00)).toEqual({ code: 0x1ff8, bits: 13 });
    expect(huffmanCode(0x0a)).toEqual({ code: 0x3ffffffc, bits: 30 });
    expect(huffmanCode(0xff)).toEqual({ code: 0x3ffffee, bits: 26 });
    expect(huffmanCode(256)).toEqual({ code: 0x3fffffff, bits: 30 });
  });

  it('decodes the RFC examples (Appendix C.4)', () => {
    const decode = (text: string): string => {
      const buf = hex(text);
      return decodeHuffman(buf, 0, buf.length);
    };
    expect(decode('f1e3 c2e5 f23a 6ba0 ab90 f4ff')).toBe('www.example.com');
    expect(decode('a8eb 1064 9cbf')).toBe('no-cache');
    expect(decode('25a8 49e9 5ba9 7d7f')).toBe('custom-key');
    expect(decode('25a8 49e9 5bb8 e8b4 bf')).toBe('custom-value');
  });

  it('decodes every byte value, as an encoder built from the same codes writes it', () => {
    const symbols = Array.from({ length: 256 }, (_, i) => i);
    let bits = '';
    for (const symbol of symbols) {
      const { code, bits: length } = huffmanCode(symbol);
      bits += code.toString(2).padStart(length, '0');
    }
    bits += '1'.repeat((8 - (bits.length % 8)) % 8);
    const bytes = Buffer.from(bits.match(/.{8}/g)?.map((byte) => parseInt(byte, 2)) ?? []);
    expect(decodeHuffman(bytes, 0, bytes.length)).toBe(String.fromCharCode(...symbols));
  });

  it('refuses padding that is not EOS, padding of a byte or more, and EOS itself', () => {
    expect(() => decodeHuffman(hex('1e'), 0, 1)).toThrow(HpackError); // '0' then 000 padding
    expect(() => decodeHuffman(hex('07ff'), 0, 2)).toThrow(HpackError); // '0', then 11 ones
    expect(() => decodeHuffman(hex('ffffffff'), 0, 4)).toThrow(HpackError); // EOS
  });
});

describe('HpackDecoder', () => {
  it('keeps the dynamic table in step across the RFC request examples (C.3, plain literals)', () => {
    const decoder = new HpackDecoder(4096, 64 * 1024);
    const first = decoder.decode(hex('8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d'), false);
    expect({ ...first.headers }).toEqual({
      ':method': 'GET',
      ':scheme': 'http',
      ':path': '/',
      ':authority': 'www.example.com',
    });
    const second = decoder.decode(hex('8286 84be 5808 6e6f 2d63 6163 6865'), false);
    expect(second.headers[':authority']).toBe('www.example.com'); // index 62, from the first block
    expect(second.headers['cache-control']).toBe('no-cache');
    const third = decoder.decode(
      hex('8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65'),
      false,
    );
    expect({ ...third.headers }).toEqual({
      ':method': 'GET',
      ':scheme': 'https',
      ':path': '/index.html',
      ':authority': 'www.example.com', // now index 63: cache-control went in front of it
      'custom-key': 'custom-value',
    });
    expect(third.fault).toBeUndefined();
  });

  it('decodes the same examples Huffman-coded (C.4)', () => {
    const decoder = new HpackDecoder(4096, 64 * 1024);
    decoder.decode(hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff'), false);
    decoder.decode(hex('8286 84be 5886 a8eb 1064 9cbf'), false);
    const third = decoder.decode(
      hex('8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf'),
      false,
    );
    expect(third.headers['custom-key']).toBe('custom-value');
    expect(third.headers[':authority']).toBe('www.example.com');
  });

  it('evicts the oldest entries past the table size, and honours a size update', () => {
    const decoder = new HpackDecoder(4096, 64 * 1024);
    // 0x3f 0x1b: a table size update to 58, room for exactly one 57-byte entry.
    decoder.decode(hex('3f1b 4004 6b65 7931 0376 616c'), false); // key1: val (39 bytes)
    const block = decoder.decode(hex('4004 6b65 7932 0376 616c be'), false); // key2, then 62
    expect(block.headers['key2']).toBe('val, val'); // the literal, then 62 is the same entry
    expect(() => decoder.decode(hex('bf'), false)).toThrow(HpackError); // key1 was evicted
    expect(() => decoder.decode(hex('3fe2 1f'), false)).toThrow(HpackError); // 4096+ is refused
  });

  it('refuses references past the table and strings cut short', () => {
    const decoder = new HpackDecoder(4096, 64 * 1024);
    expect(() => decoder.decode(hex('be'), false)).toThrow(HpackError);
    expect(() => decoder.decode(hex('80'), false)).toThrow(HpackError);
    expect(() => decoder.decode(hex('0003 6b65'), false)).toThrow(HpackError);
    expect(() => decoder.decode(hex('82 3f1b'), false)).toThrow(HpackError); // update not first
  });

  it('marks malformed requests without losing the table', () => {
    const decoder = new HpackDecoder(4096, 64 * 1024);
    const fault = (text: string, isTrailers = false): string | undefined =>
      decoder.decode(hex(text), isTrailers).fault;
    expect(fault('0003 4b45 5901 76')).toMatch(/forbidden byte/); // KEY: v
    expect(fault('0003 6b65 7901 76 83')).toMatch(/follows a regular field/);
    expect(fault('8383')).toMatch(/appears twice/);
    expect(fault('0005 3a66 6f6f 6f01 76')).toMatch(/not a request's/); // :fooo
    expect(fault('000a 636f 6e6e 6563 7469 6f6e 0563 6c6f 7365')).toMatch(/connection-specific/);
    expect(fault('0002 7465 0467 7a69 70')).toMatch(/te carries/);
    expect(fault('83', true)).toMatch(/trailers carry/);
    // A literal with indexing inside a faulty block still entered the table.
    decoder.decode(hex('4004 6b65 7933 0376 616c 0003 4b45 5901 76'), false);
    expect(decoder.decode(hex('be'), false).headers['key3']).toBe('val');
  });

  it('checks the characters of raw and Huffman-coded literals alike', () => {
    const decoder = new HpackDecoder(4096, 64 * 1024);
    const fault = (text: string): string | undefined => decoder.decode(hex(text), false).fault;
    expect(fault('0001 61 03 61 00 62')).toMatch(/control byte/); // a: a NUL b
    expect(fault('828684 0001 61 03 61 09 62')).toBeUndefined(); // HTAB inside a value is allowed
    expect(fault('0001 61 02 20 62')).toMatch(/whitespace/);
    // Huffman-coded strings as a literal's octets: the H bit and the length, then the code.
    const huffman = (text: string): Buffer => {
      let bits = Array.from(Buffer.from(text, 'latin1'))
        .map((c) => {
          const { code, bits: length } = huffmanCode(c);
          return code.toString(2).padStart(length, '0');
        })
        .join('');
      bits += '1'.repeat((8 - (bits.length % 8)) % 8); // EOS padding
      const coded = Buffer.from(bits.match(/.{8}/g)?.map((b) => parseInt(b, 2)) ?? []);
      return Buffer.concat([Buffer.from([0x80 | coded.length]), coded]);
    };
    const block = (...parts: Buffer[]): string | undefined =>
      decoder.decode(Buffer.concat(parts), false).fault;
    expect(block(hex('0001 61'), huffman('a\rb'))).toMatch(/control byte/);
    expect(block(hex('00'), huffman('AB'), hex('01 76'))).toMatch(/forbidden byte/);
    expect(block(hex('828684 00'), huffman('ab'), huffman('c\td'))).toBeUndefined();
  });

  it('keeps the name fault of a dynamic entry for literals that name it by index', () => {
    const decoder = new HpackDecoder(4096, 64 * 1024);
    // KEY: v, with indexing (62), then a literal naming 62 with the good value w.
    expect(decoder.decode(hex('4003 4b45 5901 76'), false).fault).toMatch(/forbidden byte/);
    expect(decoder.decode(hex('7e01 77'), false).fault).toMatch(/forbidden byte/);
    // A good name's entry with a bad value: the name alone is good.
    decoder.decode(hex('4001 6b02 00 76'), false);
    expect(decoder.decode(hex('be'), false).fault).toMatch(/control byte/);
    expect(decoder.decode(hex('828684 7e01 77'), false).fault).toBeUndefined(); // GET http /
  });

  it('checks an entry indexed past the list limit when a later block refers to it', () => {
    const decoder = new HpackDecoder(4096, 200);
    const big = Buffer.concat([hex('4001 78 64'), Buffer.alloc(100, 0x61)]);
    // y: a NUL b, indexed while the block is already past its limit.
    decoder.decode(Buffer.concat([big, big, hex('4001 79 03 6100 62')]), false);
    expect(decoder.decode(hex('be'), false).fault).toMatch(/control byte/);
  });

  it('past the header list limit follows the table but decodes and keeps no more fields', () => {
    const decoder = new HpackDecoder(4096, 200);
    // x: 100 bytes, indexed (62), then referred to 1,000 times: 132 KB of header list.
    const literal = Buffer.concat([hex('4001 78 64'), Buffer.alloc(100, 0x61)]);
    const block = decoder.decode(Buffer.concat([literal, Buffer.alloc(1000, 0xbe)]), false);
    // Counting stops once past the limit: the rest are only checked as references.
    expect(block.listBytes).toBe(2 * (1 + 100 + 32));
    expect(block.headers['x']).toBe('a'.repeat(100)); // the first only: the second is past 200
    expect(decoder.decode(hex('be'), false).headers['x']).toBe('a'.repeat(100)); // table intact
  });

  it.each([
    ['index 0', '80'],
    ['an index past the table', 'bf'],
    ['an index past the table in two bytes', 'ff 00'],
  ])('past the header list limit still refuses a reference to %s', (_, bad) => {
    const decoder = new HpackDecoder(4096, 200);
    const literal = Buffer.concat([hex('4001 78 64'), Buffer.alloc(100, 0x61)]);
    // A run of good one-byte references, then the bad one, then more good ones.
    const block = Buffer.concat([literal, Buffer.alloc(50, 0xbe), hex(bad), Buffer.alloc(5, 0xbe)]);
    expect(() => decoder.decode(block, false)).toThrow(HpackError);
  });

  it('past the header list limit follows a run of references with other fields after it', () => {
    const decoder = new HpackDecoder(4096, 200);
    const literal = Buffer.concat([hex('4001 78 64'), Buffer.alloc(100, 0x61)]);
    // After the run: z: 1 indexed (the new 62), then a reference to it, then x by its new index.
    const block = Buffer.concat([literal, Buffer.alloc(50, 0xbe), hex('4001 7a01 31 be bf')]);
    expect(decoder.decode(block, false).listBytes).toBe(2 * (1 + 100 + 32));
    // A size update after the run is still one that follows a field.
    expect(() => decoder.decode(Buffer.concat([literal, literal, hex('be 20')]), false)).toThrow(
      /follows a header field/,
    );
    const table = new HpackDecoder(4096, 64 * 1024);
    table.decode(Buffer.concat([literal, hex('4001 7a01 31')]), false);
    expect(table.decode(hex('be bf'), false).headers).toMatchObject({ z: '1', x: 'a'.repeat(100) });
  });

  it('keeps names an object would inherit as plain fields', () => {
    // __proto__: x, constructor: y, toString: z
    const text = '0009 5f5f 7072 6f74 6f5f 5f01 78 000b 636f 6e73 7472 7563 746f 7201 79';
    const block = new HpackDecoder(4096, 64 * 1024).decode(
      hex(`${text} 0008 746f 5374 7269 6e67 017a`),
      false,
    );
    expect(Object.entries(block.headers)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 'y'],
      ['toString', 'z'],
    ]);
    expect(Object.getPrototypeOf(block.headers)).not.toBe(Object.prototype);
  });

  it('joins repeated fields and counts the header list size', () => {
    const block = new HpackDecoder(4096, 64 * 1024).decode(hex('0001 6101 31 0001 6101 32'), false);
    expect(block.headers['a']).toBe('1, 2');
    expect(block.listBytes).toBe(2 * (1 + 1 + 32));
  });
});

describe('encodeHeaderBlock', () => {
  it('writes literals a decoder reads back, :status 200 as one byte', () => {
    const block = encodeHeaderBlock({
      ':status': 200,
      'content-type': 'application/grpc',
      'grpc-message': 'x'.repeat(300),
    });
    expect(block[0]).toBe(0x88);
    const decoded = new HpackDecoder(4096, 64 * 1024).decode(block, false);
    expect(decoded.headers['content-type']).toBe('application/grpc');
    expect(decoded.headers['grpc-message']).toBe('x'.repeat(300));
  });
});
