// HPACK (RFC 7541): the decoder of one connection's request header blocks (the encoder of its
// answers is hpack-encoder.ts).
import { decodeHuffman, type ByteClasses } from './huffman';
import { HpackError } from './hpack-error';
import { STATIC_TABLE } from './hpack-static';
import {
  BYTE_CLASS,
  checkName,
  checkRegular,
  checkRequest,
  checkValue,
  type RequestShape,
} from './request-rules';

/** A request's header fields by name; repeated fields are joined with ", ". */
export type H2Headers = Record<string, string>;

/** What an entry costs in the dynamic table: its octets and 32 more (section 4.1). */
const ENTRY_OVERHEAD = 32;

/** A field as the tables keep it, with the character rules it breaks checked once. */
interface Entry {
  readonly name: string;
  readonly value: string;
  /** The rule the field breaks, its name's or its value's. */
  readonly fault: string | undefined;
  /** The rule its name breaks, for a literal that names it by index with another value. */
  readonly nameFault: string | undefined;
}

const STATIC_ENTRIES: readonly Entry[] = STATIC_TABLE.map(([name, value]) => ({
  name,
  value,
  fault: undefined,
  nameFault: undefined,
}));

function entryBytes(entry: Entry): number {
  return entry.name.length + entry.value.length + ENTRY_OVERHEAD;
}

/** A decoded block: its fields, and why the request is malformed if it is. */
export interface DecodedBlock {
  readonly headers: H2Headers;
  /** Set when the block breaks a rule of RFC 9113 section 8: the stream is reset. */
  readonly fault: string | undefined;
  /** Header list size as SETTINGS_MAX_HEADER_LIST_SIZE counts it (up to just past it). */
  readonly listBytes: number;
  /** The request's content-length, when it declared one. */
  readonly contentLength: number | undefined;
}

/** Reads an integer with an N-bit prefix (section 5.1), and string literals. */
class Reader implements ByteClasses {
  offset = 0;
  /** The byte classes of the last string read. */
  classes = 0;
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

  /** A string literal's bounds: where its octets are, and whether they are Huffman-coded. */
  private bounds(): readonly [number, number, boolean] {
    if (this.offset >= this.buf.length) throw new HpackError('a string is cut short');
    const isHuffman = ((this.buf[this.offset] ?? 0) & 0x80) !== 0;
    const length = this.integer(7);
    const start = this.offset;
    const end = start + length;
    if (end > this.buf.length) throw new HpackError('a string is cut short');
    this.offset = end;
    return [start, end, isHuffman];
  }

  string(): string {
    const [start, end, isHuffman] = this.bounds();
    if (isHuffman) return decodeHuffman(this.buf, start, end, this);
    const { buf } = this;
    let classes = 0;
    for (let i = start; i < end; i++) classes |= BYTE_CLASS[buf[i] ?? 0] ?? 0;
    this.classes = classes;
    return buf.toString('latin1', start, end);
  }

  /** Passes over a string without decoding it; returns the fewest octets it decodes to. */
  skipString(): number {
    const [start, end, isHuffman] = this.bounds();
    // The longest Huffman code is 30 bits.
    return isHuffman ? Math.floor(((end - start) * 8) / 30) : end - start;
  }
}

/**
 * A block's fields by name, inheriting nothing, so that no header name (`__proto__`,
 * `constructor`) means anything but itself. Not Object.create(null): that makes a dictionary
 * from the start, and storing each field in it cost about 3% of a whole answer; instances of
 * one constructor share hidden classes as the usual names arrive in the usual order.
 */
// eslint-disable-next-line @typescript-eslint/no-extraneous-class -- only its instances matter
class HeaderRecord {}
Object.setPrototypeOf(HeaderRecord.prototype, null);
Reflect.deleteProperty(HeaderRecord.prototype, 'constructor');

/** The fields of one block as they are decoded, until the list grows past its limit. */
class FieldList implements RequestShape {
  readonly headers: H2Headers = new HeaderRecord() as H2Headers;
  fault: string | undefined = undefined;
  bytes = 0;
  method: string | undefined = undefined;
  scheme: string | undefined = undefined;
  path: string | undefined = undefined;
  authority: string | undefined = undefined;
  contentLength: string | undefined = undefined;
  private isRegularSeen = false;

  constructor(
    private readonly maxBytes: number,
    private readonly isTrailers: boolean,
  ) {}

  get isFull(): boolean {
    return this.bytes > this.maxBytes;
  }

  add(entry: Entry): void {
    const { name, value } = entry;
    this.bytes += entryBytes(entry);
    if (this.bytes > this.maxBytes) return;
    const fault =
      entry.fault ??
      (name.charCodeAt(0) === 0x3a ? this.pseudo(name, value) : this.regular(name, value));
    this.fault ??= fault;
    const previous = this.headers[name];
    this.headers[name] = previous === undefined ? value : `${previous}, ${value}`;
  }

  result(): DecodedBlock {
    let fault = this.fault;
    if (fault === undefined && !this.isTrailers && !this.isFull) fault = checkRequest(this);
    const length = this.contentLength;
    const contentLength = fault === undefined && length !== undefined ? Number(length) : undefined;
    return { headers: this.headers, fault, listBytes: this.bytes, contentLength };
  }

  /** A pseudo-header: a request's, once, before any regular field (section 8.3). */
  private pseudo(name: string, value: string): string | undefined {
    if (this.isTrailers) return `trailers carry the pseudo-header ${name}`;
    if (this.isRegularSeen) return `the pseudo-header ${name} follows a regular field`;
    let previous: string | undefined;
    switch (name) {
      case ':method':
        previous = this.method;
        this.method = value;
        break;
      case ':scheme':
        previous = this.scheme;
        this.scheme = value;
        break;
      case ':path':
        previous = this.path;
        this.path = value;
        break;
      case ':authority':
        previous = this.authority;
        this.authority = value;
        break;
      default:
        return `the pseudo-header ${name} is not a request's`;
    }
    return previous === undefined ? undefined : `the pseudo-header ${name} appears twice`;
  }

  private regular(name: string, value: string): string | undefined {
    this.isRegularSeen = true;
    if (name === 'content-length') {
      if (this.contentLength !== undefined) return 'content-length appears twice';
      this.contentLength = value;
    }
    return checkRegular(name, value);
  }
}

/** One connection's decoding state: the dynamic table the client's encoder fills. */
export class HpackDecoder {
  /** Newest last; index 62 is the newest entry. */
  private readonly entries: Entry[] = [];
  private size = 0;
  private maxSize: number;

  /**
   * @param tableBytes the SETTINGS_HEADER_TABLE_SIZE this side advertised.
   * @param maxListBytes the SETTINGS_MAX_HEADER_LIST_SIZE: past it fields are no longer
   * decoded, only followed as far as the table must stay in step, so a small block referring
   * to a large entry many times costs what its bytes cost.
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
    const list = new FieldList(this.maxListBytes, isTrailers);
    let isStart = true;
    while (reader.offset < block.length) {
      const byte = block[reader.offset] ?? 0;
      if ((byte & 0xe0) === 0x20) {
        // Size updates open a block, as many as the encoder needs (section 4.2).
        if (!isStart) throw new HpackError('a table size update follows a header field');
        this.sizeUpdate(reader);
        continue;
      }
      isStart = false;
      if (list.isFull) this.skip(reader, byte);
      else list.add(this.field(reader, byte));
    }
    return list.result();
  }

  private sizeUpdate(reader: Reader): void {
    const size = reader.integer(5);
    if (size > this.tableBytes) throw new HpackError('a table size update exceeds the setting');
    this.maxSize = size;
    this.evict(0);
  }

  /** One field representation. */
  private field(reader: Reader, byte: number): Entry {
    if ((byte & 0x80) !== 0) return this.at(reader.integer(7));
    const isIndexed = (byte & 0xc0) === 0x40;
    // Without indexing (0000) and never indexed (0001): the same but for what proxies may do.
    const index = reader.integer(isIndexed ? 6 : 4);
    const entry = this.literal(reader, index);
    if (isIndexed) this.insert(entry);
    return entry;
  }

  /** A literal's name (by index or literal) and value, with the rules they break. */
  private literal(reader: Reader, index: number): Entry {
    let name: string;
    let nameFault: string | undefined;
    if (index === 0) {
      name = reader.string();
      nameFault = checkName(name, reader.classes);
    } else {
      ({ name, nameFault } = this.at(index));
    }
    const value = reader.string();
    return { name, value, fault: nameFault ?? checkValue(name, value, reader.classes), nameFault };
  }

  /**
   * Past the list limit, a run of one-byte indexed fields changes nothing but must refer to
   * entries that exist: checked a byte at a time, as an HPACK bomb is mostly such a run. Returns
   * where the run ends; a longer index, or a bad one, ends it.
   */
  private indexedRun(block: Buffer, start: number): number {
    const highest = STATIC_ENTRIES.length + this.entries.length;
    let offset = start;
    while (offset < block.length) {
      const byte = block[offset] ?? 0;
      const index = byte & 0x7f;
      if (byte <= 0x80 || index === 0x7f || index > highest) break;
      offset++;
    }
    return offset;
  }

  /** Follows a representation past the list limit: only what the table needs is decoded. */
  private skip(reader: Reader, byte: number): void {
    if ((byte & 0x80) !== 0) {
      const runEnd = this.indexedRun(reader.buf, reader.offset);
      if (runEnd > reader.offset) reader.offset = runEnd;
      else this.at(reader.integer(7));
      return;
    }
    const isIndexed = (byte & 0xc0) === 0x40;
    const index = reader.integer(isIndexed ? 6 : 4);
    if (!isIndexed) {
      if (index === 0) reader.skipString();
      else this.at(index);
      reader.skipString();
      return;
    }
    const start = reader.offset;
    const least =
      (index === 0 ? reader.skipString() : this.at(index).name.length) + reader.skipString();
    if (least + ENTRY_OVERHEAD > this.maxSize) {
      // Too large for the table whatever it decodes to: it empties the table (section 4.4).
      this.evict(this.maxSize + 1);
      return;
    }
    reader.offset = start;
    // Checked like any other: a later block that refers to it is a request like any other.
    this.insert(this.literal(reader, index));
  }

  private at(index: number): Entry {
    if (index === 0) throw new HpackError('a field refers to index 0');
    const entry =
      index <= STATIC_ENTRIES.length
        ? STATIC_ENTRIES[index - 1]
        : this.entries[this.entries.length - (index - STATIC_ENTRIES.length)];
    if (entry === undefined) throw new HpackError(`a field refers to index ${String(index)}`);
    return entry;
  }

  private insert(entry: Entry): void {
    const bytes = entryBytes(entry);
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
      if (oldest !== undefined) this.size -= entryBytes(oldest);
    }
  }
}
