// HPACK (RFC 7541): the decoder of one connection's request header blocks, and the encoder of
// its answers. Answers use literals that never enter the dynamic table, so the encoder has no
// state and the client's table size setting never matters to it.
import { decodeHuffman } from './huffman';
import { HpackError } from './hpack-error';

/** A request's header fields by name; repeated fields are joined with ", ". */
export type H2Headers = Record<string, string>;

/** Header fields to send: names in lower case, values turned into strings. */
export type OutgoingHeaders = Readonly<Record<string, string | number>>;

// RFC 7541 Appendix A, indices 1–61.
// prettier-ignore
const STATIC_TABLE: readonly (readonly [string, string])[] = [
  [':authority', ''], [':method', 'GET'], [':method', 'POST'], [':path', '/'],
  [':path', '/index.html'], [':scheme', 'http'], [':scheme', 'https'], [':status', '200'],
  [':status', '204'], [':status', '206'], [':status', '304'], [':status', '400'],
  [':status', '404'], [':status', '500'], ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'], ['accept-language', ''], ['accept-ranges', ''],
  ['accept', ''], ['access-control-allow-origin', ''], ['age', ''], ['allow', ''],
  ['authorization', ''], ['cache-control', ''], ['content-disposition', ''],
  ['content-encoding', ''], ['content-language', ''], ['content-length', ''],
  ['content-location', ''], ['content-range', ''], ['content-type', ''], ['cookie', ''],
  ['date', ''], ['etag', ''], ['expect', ''], ['expires', ''], ['from', ''], ['host', ''],
  ['if-match', ''], ['if-modified-since', ''], ['if-none-match', ''], ['if-range', ''],
  ['if-unmodified-since', ''], ['last-modified', ''], ['link', ''], ['location', ''],
  ['max-forwards', ''], ['proxy-authenticate', ''], ['proxy-authorization', ''],
  ['range', ''], ['referer', ''], ['refresh', ''], ['retry-after', ''], ['server', ''],
  ['set-cookie', ''], ['strict-transport-security', ''], ['transfer-encoding', ''],
  ['user-agent', ''], ['vary', ''], ['via', ''], ['www-authenticate', ''],
];

/** What an entry costs in the dynamic table: its octets and 32 more (section 4.1). */
const ENTRY_OVERHEAD = 32;

/** Fields a request may carry: RFC 9113 section 8.2.2 forbids connection-specific ones. */
const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);
const REQUEST_PSEUDO = new Set([':method', ':scheme', ':path', ':authority']);

/** A decoded block: its fields, and why the request is malformed if it is. */
export interface DecodedBlock {
  readonly headers: H2Headers;
  /** Set when the block breaks a rule of RFC 9113 section 8: the stream is reset. */
  readonly fault: string | undefined;
  /** Header list size as SETTINGS_MAX_HEADER_LIST_SIZE counts it. */
  readonly listBytes: number;
}

/** Reads an integer with an N-bit prefix (section 5.1). */
class Reader {
  offset = 0;
  constructor(readonly buf: Buffer) {}

  integer(prefixBits: number): number {
    const { buf } = this;
    const max = (1 << prefixBits) - 1;
    let value = (buf[this.offset++] ?? 0) & max;
    if (value < max) return value;
    let shift = 0;
    for (;;) {
      if (this.offset >= buf.length) throw new HpackError('an integer is cut short');
      const byte = buf[this.offset++] ?? 0;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if ((byte & 0x80) === 0) return value;
      // Nothing a header block can refer to is this large.
      if (shift > 28) throw new HpackError('an integer is too large');
    }
  }

  string(): string {
    if (this.offset >= this.buf.length) throw new HpackError('a string is cut short');
    const isHuffman = ((this.buf[this.offset] ?? 0) & 0x80) !== 0;
    const length = this.integer(7);
    const start = this.offset;
    const end = start + length;
    if (end > this.buf.length) throw new HpackError('a string is cut short');
    this.offset = end;
    return isHuffman
      ? decodeHuffman(this.buf, start, end)
      : this.buf.toString('latin1', start, end);
  }
}

/** One connection's decoding state: the dynamic table the client's encoder fills. */
export class HpackDecoder {
  /** Newest last; index 62 is the newest entry. */
  private readonly entries: (readonly [string, string])[] = [];
  private size = 0;
  private maxSize: number;

  /**
   * @param tableBytes the SETTINGS_HEADER_TABLE_SIZE this side advertised.
   * @param maxListBytes the SETTINGS_MAX_HEADER_LIST_SIZE: past it fields are decoded (the
   * table must stay in step) but no longer kept, so a small block referring to a large entry
   * many times cannot make a large header list.
   */
  constructor(
    private readonly tableBytes: number,
    private readonly maxListBytes: number,
  ) {
    this.maxSize = tableBytes;
  }

  /**
   * Decodes one complete header block. A block the table cannot follow throws HpackError (the
   * connection is lost); a block that decodes but is not a valid request comes back with a
   * fault, so the table stays in step while that one stream is refused.
   */
  decode(block: Buffer, isTrailers: boolean): DecodedBlock {
    const reader = new Reader(block);
    const headers: H2Headers = Object.create(null) as H2Headers;
    let fault: string | undefined;
    let listBytes = 0;
    let isRegularSeen = false;
    let isFirst = true;
    while (reader.offset < block.length) {
      const field = this.field(reader, isFirst);
      isFirst = false;
      if (field === undefined) continue;
      const [name, value] = field;
      listBytes += name.length + value.length + ENTRY_OVERHEAD;
      if (listBytes > this.maxListBytes) continue;
      fault ??= checkField(name, value, headers, isRegularSeen, isTrailers);
      if (name.charCodeAt(0) !== 0x3a) isRegularSeen = true;
      const previous = headers[name];
      headers[name] = previous === undefined ? value : `${previous}, ${value}`;
    }
    return { headers, fault, listBytes };
  }

  /** One representation; undefined for a table size update. */
  private field(reader: Reader, isFirst: boolean): readonly [string, string] | undefined {
    const byte = reader.buf[reader.offset] ?? 0;
    if ((byte & 0x80) !== 0) return this.at(reader.integer(7));
    if ((byte & 0xc0) === 0x40) {
      const entry = this.literal(reader, 6);
      this.insert(entry);
      return entry;
    }
    if ((byte & 0xe0) === 0x20) {
      if (!isFirst) throw new HpackError('a table size update follows a header field');
      const size = reader.integer(5);
      if (size > this.tableBytes) throw new HpackError('a table size update exceeds the setting');
      this.maxSize = size;
      this.evict(0);
      return undefined;
    }
    // Without indexing (0000) and never indexed (0001): the same but for what proxies may do.
    return this.literal(reader, 4);
  }

  private literal(reader: Reader, prefixBits: number): readonly [string, string] {
    const index = reader.integer(prefixBits);
    const name = index === 0 ? reader.string() : this.at(index)[0];
    return [name, reader.string()];
  }

  private at(index: number): readonly [string, string] {
    if (index === 0) throw new HpackError('a field refers to index 0');
    const entry =
      index <= STATIC_TABLE.length
        ? STATIC_TABLE[index - 1]
        : this.entries[this.entries.length - (index - STATIC_TABLE.length)];
    if (entry === undefined) throw new HpackError(`a field refers to index ${String(index)}`);
    return entry;
  }

  private insert(entry: readonly [string, string]): void {
    const bytes = entry[0].length + entry[1].length + ENTRY_OVERHEAD;
    this.evict(bytes);
    // An entry larger than the table empties it and is not added (section 4.4).
    if (bytes > this.maxSize) return;
    this.entries.push(entry);
    this.size += bytes;
  }

  /** Drops the oldest entries until `room` more bytes fit. */
  private evict(room: number): void {
    while (this.size + room > this.maxSize && this.entries.length > 0) {
      const oldest = this.entries.shift();
      if (oldest !== undefined) this.size -= oldest[0].length + oldest[1].length + ENTRY_OVERHEAD;
    }
  }
}

/** The rule of RFC 9113 section 8.2–8.3 a field breaks, if any. */
function checkField(
  name: string,
  value: string,
  seen: H2Headers,
  isRegularSeen: boolean,
  isTrailers: boolean,
): string | undefined {
  if (name.length === 0) return 'a header field has an empty name';
  if (name.charCodeAt(0) === 0x3a) {
    if (isTrailers) return `trailers carry the pseudo-header ${name}`;
    if (!REQUEST_PSEUDO.has(name)) return `the pseudo-header ${name} is not a request's`;
    if (isRegularSeen) return `the pseudo-header ${name} follows a regular field`;
    if (seen[name] !== undefined) return `the pseudo-header ${name} appears twice`;
    return undefined;
  }
  if (/[A-Z]/.test(name)) return `the header name ${name} is not in lower case`;
  if (CONNECTION_SPECIFIC.has(name)) return `the connection-specific field ${name}`;
  if (name === 'te' && value !== 'trailers') return 'te carries something other than trailers';
  return undefined;
}

/** Static indices by name, for literals that reuse a static name. */
const STATIC_NAME_INDEX = new Map<string, number>();
STATIC_TABLE.forEach(([name], i) => {
  if (!STATIC_NAME_INDEX.has(name)) STATIC_NAME_INDEX.set(name, i + 1);
});

function pushInteger(out: number[], value: number, prefixBits: number, firstBits: number): void {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    out.push(firstBits | value);
    return;
  }
  out.push(firstBits | max);
  let rest = value - max;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

function pushString(out: number[], value: string): void {
  pushInteger(out, value.length, 7, 0);
  for (let i = 0; i < value.length; i++) out.push(value.charCodeAt(i) & 0xff);
}

/**
 * A header block for `fields`, as literals without indexing (names from the static table
 * where it has them); `:status: 200` is the one static entry used whole.
 */
export function encodeHeaderBlock(fields: OutgoingHeaders): Buffer {
  const out: number[] = [];
  for (const name of Object.keys(fields)) {
    const value = String(fields[name]);
    if (name === ':status' && value === '200') {
      out.push(0x88);
      continue;
    }
    const index = STATIC_NAME_INDEX.get(name);
    if (index === undefined) {
      out.push(0x00);
      pushString(out, name);
    } else pushInteger(out, index, 4, 0x00);
    pushString(out, value);
  }
  return Buffer.from(out);
}
