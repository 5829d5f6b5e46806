// The HPACK decoder against independent encoders: Debian's python3-hpack (Huffman on and off,
// table sizes from 0 to 4,096, never-indexed fields) and node:http2's client (nghttp2's
// encoder, with its dynamic table from 0 to 4,096 bytes and sensitive fields), each header
// list compared field for field with what was encoded.
import { spawnSync } from 'node:child_process';
import http2 from 'node:http2';
import net from 'node:net';
import fc from 'fast-check';
import { acceptH2, type H2Headers } from '../../../../src/server/h2';
import { HpackDecoder } from '../../../../src/server/h2/hpack';

type Field = readonly [string, string];

/** Names as clients send them, and made-up ones; values of every allowed byte. */
const names = fc.oneof(
  fc.constantFrom('content-type', 'user-agent', 'grpc-timeout', 'x-request-id', 'cookie', 'accept'),
  fc.stringMatching(/^x-[a-z0-9-]{1,20}$/),
);
const values = fc
  .array(
    fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f),
    { maxLength: 60 },
  )
  .map((codes) => String.fromCharCode(...codes).trim());
const headerLists = fc.array(fc.tuple(names, values), { minLength: 1, maxLength: 12 });

/** What a header list decodes to: repeated names joined with ", ", in order. */
function expected(fields: readonly Field[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of fields) out[name] = name in out ? `${out[name]}, ${value}` : value;
  return out;
}

const PYTHON_ENCODER = `
import json, sys
from hpack import Encoder, HeaderTuple, NeverIndexedHeaderTuple
out = []
for conn in json.load(sys.stdin):
    enc = Encoder()
    enc.header_table_size = conn["tableSize"]
    blocks = []
    for block in conn["blocks"]:
        fields = [(NeverIndexedHeaderTuple if i in block["sensitive"] else HeaderTuple)(
                      bytes.fromhex(n), bytes.fromhex(v)) for i, (n, v) in enumerate(block["fields"])]
        blocks.append(enc.encode(fields, huffman=conn["huffman"]).hex())
    out.append(blocks)
print(json.dumps(out))
`;

interface PythonConnection {
  readonly tableSize: number;
  readonly huffman: boolean;
  readonly blocks: readonly { readonly fields: readonly Field[]; readonly sensitive: number[] }[];
}

function pythonEncode(connections: readonly PythonConnection[]): string[][] {
  // Names and values go as the hex of their bytes: JSON would carry them as UTF-8.
  const hex = (text: string): string => Buffer.from(text, 'latin1').toString('hex');
  const asHex = connections.map((c) => ({
    ...c,
    blocks: c.blocks.map((b) => ({ ...b, fields: b.fields.map(([n, v]) => [hex(n), hex(v)]) })),
  }));
  const run = spawnSync('/usr/bin/python3', ['-c', PYTHON_ENCODER], {
    input: JSON.stringify(asHex),
    encoding: 'utf8',
  });
  if (run.error !== undefined || run.status !== 0) {
    throw new Error(
      `/usr/bin/python3 with python3-hpack failed: ${String(run.error ?? run.stderr)}`,
    );
  }
  return JSON.parse(run.stdout) as string[][];
}

describe('HPACK decoding against python3-hpack', () => {
  it('decodes every block of 40 connections field for field', () => {
    const connections = fc.sample(
      fc.record({
        tableSize: fc.constantFrom(0, 64, 256, 4096),
        huffman: fc.boolean(),
        blocks: fc.array(
          headerLists.chain((fields) =>
            fc.record({
              fields: fc.constant(fields),
              sensitive: fc.subarray(fields.map((_, i) => i)),
            }),
          ),
          { minLength: 1, maxLength: 6 },
        ),
      }),
      { numRuns: 40, seed: 7 },
    );
    const encoded = pythonEncode(connections);
    connections.forEach((connection, c) => {
      const decoder = new HpackDecoder(4096, 1024 * 1024);
      connection.blocks.forEach((block, b) => {
        const bytes = Buffer.from(encoded[c]?.[b] ?? '', 'hex');
        const decoded = decoder.decode(bytes, true);
        expect({ ...decoded.headers }).toEqual(expected(block.fields));
      });
    });
  });
});

describe('HPACK decoding against node:http2 (nghttp2) as the encoder', () => {
  let listener: net.Server;
  let port: number;
  const seen: H2Headers[] = [];
  beforeAll(async () => {
    listener = net.createServer();
    acceptH2(
      listener,
      false,
      { maxConcurrentStreams: 100, maxHeaderListBytes: 1024 * 1024 },
      {
        session: () => undefined,
        stream: (stream, headers) => {
          seen.push(headers);
          stream.respond({ ':status': 200 }, { endStream: true });
        },
      },
    );
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => listener.close(resolve));
  });

  it.each([0, 256, 4096])('with a dynamic table of %i bytes', async (tableSize) => {
    const session = http2.connect(`http://127.0.0.1:${String(port)}`, {
      maxDeflateDynamicTableSize: tableSize,
    });
    session.on('error', () => undefined);
    const lists = fc.sample(fc.tuple(headerLists, fc.boolean()), { numRuns: 25, seed: tableSize });
    for (const [fields, isSensitive] of lists) {
      seen.length = 0;
      // node:http2 takes some fields once only: each name's first value is sent.
      const headers: http2.OutgoingHttpHeaders = { ':method': 'POST', ':path': '/' };
      for (const [name, value] of fields) headers[name] ??= value;
      if (isSensitive)
        (headers as Record<symbol, unknown>)[http2.sensitiveHeaders] = fields.map(([name]) => name);
      await new Promise<void>((resolve, reject) => {
        const stream = session.request(headers, { endStream: true });
        stream.on('response', () => {
          resolve();
        });
        stream.on('error', reject);
      });
      const got = seen[0] ?? {};
      const want = expected(
        Object.entries(headers).filter(
          (field): field is [string, string] => !field[0].startsWith(':'),
        ),
      );
      for (const [name, value] of Object.entries(want))
        expect([name, got[name]]).toEqual([name, value]);
    }
    session.close();
  });
});
