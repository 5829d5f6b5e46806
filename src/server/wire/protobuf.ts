// The protobuf wire format, just enough of it for the hand-written codecs of the hot path.
// Decoding works on the received buffer in place; encoding writes into one scratch buffer
// that is reused across calls, so a message costs one exactly sized copy at the end.
// docs/wire-format.md says which malformed bytes are refused and which are skipped.
import { isUtf8 } from 'node:buffer';

export const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
const WIRE_START_GROUP = 3;
const WIRE_END_GROUP = 4;
const WIRE_FIXED32 = 5;

/** The largest tag of a valid field: field number 2^29-1, wire type 7. */
const MAX_TAG = 0xffffffff;
/** The largest field number protobuf-go reads inside a group. */
const MAX_GROUP_FIELD = 2 ** 31 - 1;
/** Groups nested deeper than this are refused, as protobuf-go refuses them. */
const MAX_GROUP_DEPTH = 10_000;
/** Strings up to this many bytes are looked at byte by byte for ASCII before decoding. */
const SHORT_TEXT = 64;

/** Bytes that are not a well-formed message of the expected type. */
export class MalformedMessage extends Error {
  constructor(what: string) {
    super(what);
    this.name = 'MalformedMessage';
  }
}

/**
 * A cursor over one message of a buffer. `end` is where the message being read ends: `enter`
 * narrows it to a length-delimited sub-message and `leave` restores it, so that no read of a
 * sub-message's fields can run into its siblings.
 */
export class ProtoReader {
  pos: number;
  end: number;

  constructor(
    readonly buf: Buffer,
    start: number,
    end: number,
  ) {
    this.pos = start;
    this.end = end;
  }

  get isDone(): boolean {
    return this.pos >= this.end;
  }

  /**
   * A varint as a number. Values past 2^53 lose precision; fields that must fit a smaller
   * range are checked by their caller, and 64-bit values this large are refused there. A
   * tenth byte above 1 would carry a 65th bit: refused, as protobuf-go refuses it.
   */
  varint(): number {
    const { buf, end } = this;
    let pos = this.pos;
    let byte = pos < end ? (buf[pos++] as number) : -1;
    if (byte < 0) throw new MalformedMessage('a varint runs past the end of the message');
    if (byte < 0x80) {
      this.pos = pos;
      return byte;
    }
    let value = byte & 0x7f;
    let scale = 0x80;
    for (let i = 1; i < 10; i++) {
      byte = pos < end ? (buf[pos++] as number) : -1;
      if (byte < 0) throw new MalformedMessage('a varint runs past the end of the message');
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        if (i === 9 && byte > 1) break;
        this.pos = pos;
        return value;
      }
      scale *= 0x80;
    }
    throw new MalformedMessage('a varint does not fit 64 bits');
  }

  /** Starts a length-delimited field; returns where it ends and leaves pos at its start. */
  delimited(): number {
    const length = this.varint();
    const end = this.pos + length;
    if (end > this.end) throw new MalformedMessage('a field runs past the end of the message');
    return end;
  }

  /** Opens a length-delimited sub-message; returns the enclosing end, for `leave`. */
  enter(): number {
    const end = this.delimited();
    const outer = this.end;
    this.end = end;
    return outer;
  }

  /** Closes the sub-message `enter` opened (its fields have all been read: pos is its end). */
  leave(outer: number): void {
    this.end = outer;
  }

  /** A string field, refused unless its bytes are UTF-8 (proto3 strings must be). */
  string(): string {
    const end = this.delimited();
    return this.utf8(end);
  }

  /** The bytes from pos to `end` as UTF-8 text; pos moves to `end`. */
  utf8(end: number): string {
    const start = this.pos;
    this.pos = end;
    if (start === end) return '';
    const { buf } = this;
    if (end - start <= SHORT_TEXT) {
      // Short ASCII text, what most descriptor keys and values are, is UTF-8 as it stands: a
      // look at its bytes costs less than the search below, a call into V8 for every string.
      let bits = 0;
      for (let i = start; i < end; i++) bits |= buf[i] ?? 0;
      if (bits < 0x80) return buf.toString('latin1', start, end);
    }
    const text = buf.toString('utf8', start, end);
    // The decoder puts U+FFFD where the bytes are not UTF-8, so only text holding one needs
    // its bytes checked. V8 answers the search at once for one-byte strings, which most
    // values are; a check of the bytes themselves would cost more for long strings.
    if (text.includes('\ufffd') && !isUtf8(buf.subarray(start, end)))
      throw new MalformedMessage('a string field is not valid UTF-8');
    return text;
  }

  /**
   * Skips a field the caller does not read: an unknown field number, or a known one with a
   * wire type other than its declared one, which protobuf-go also keeps as an unknown field.
   * What protobuf-go refuses is refused: field number 0 or past 2^29-1, an end-group marker
   * without its group, wire types 6 and 7.
   */
  skipField(tag: number): void {
    if (tag < 8 || tag > MAX_TAG) throw new MalformedMessage('a field number is out of range');
    this.skipValue(tag & 7, tag >>> 3);
  }

  private skipValue(wireType: number, field: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_FIXED64:
        this.advance(8);
        return;
      case WIRE_BYTES:
        this.pos = this.delimited();
        return;
      case WIRE_START_GROUP:
        this.skipGroup(field);
        return;
      case WIRE_END_GROUP:
        throw new MalformedMessage('an end-group marker closes no group');
      case WIRE_FIXED32:
        this.advance(4);
        return;
      default:
        throw new MalformedMessage(`wire type ${wireType} is not supported`);
    }
  }

  private advance(bytes: number): void {
    if (this.pos + bytes > this.end)
      throw new MalformedMessage('a field runs past the end of the message');
    this.pos += bytes;
  }

  /**
   * Skips a group (a deprecated encoding) up to the end-group marker of the same number.
   * Inside a group protobuf-go takes field numbers up to 2^31-1, and so does this.
   */
  private skipGroup(field: number): void {
    const open = [field];
    while (open.length > 0) {
      const tag = this.varint();
      const number = Math.floor(tag / 8);
      const wireType = tag % 8;
      if (number < 1 || number > MAX_GROUP_FIELD)
        throw new MalformedMessage('a field number is out of range');
      if (wireType === WIRE_END_GROUP) {
        if (number !== open.pop()) throw new MalformedMessage('a group ends with another number');
      } else if (wireType === WIRE_START_GROUP) {
        if (open.length > MAX_GROUP_DEPTH) throw new MalformedMessage('groups nest too deep');
        open.push(number);
      } else {
        this.skipValue(wireType, number);
      }
    }
  }
}

let scratch = Buffer.allocUnsafe(16 * 1024);

/** Bytes a varint of this value takes. */
export function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    size += 1;
  }
  return size;
}

/**
 * Writes one message into the shared scratch buffer. Sub-messages reserve one byte for their
 * length and shift their contents when the length needs more, so lengths stay canonical.
 * Only one writer may be open at a time: encoding is synchronous and never nests writers.
 */
export class ProtoWriter {
  private pos: number;

  /** `prefix` bytes are left at the front for the caller (the gRPC frame header). */
  constructor(private readonly prefix = 0) {
    this.pos = prefix;
  }

  private ensure(extra: number): void {
    if (this.pos + extra <= scratch.length) return;
    const grown = Buffer.allocUnsafe(Math.max(scratch.length * 2, this.pos + extra));
    scratch.copy(grown, 0, 0, this.pos);
    scratch = grown;
  }

  private rawVarint(value: number): void {
    while (value >= 0x80) {
      scratch[this.pos++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    scratch[this.pos++] = value;
  }

  /** A non-negative integer field; zero is written too (callers skip proto3 defaults). */
  varint(field: number, value: number): void {
    this.ensure(15);
    this.rawVarint(field * 8 + WIRE_VARINT);
    this.rawVarint(value);
  }

  bool(field: number, value: boolean): void {
    this.varint(field, value ? 1 : 0);
  }

  double(field: number, value: number): void {
    this.ensure(13);
    this.rawVarint(field * 8 + WIRE_FIXED64);
    scratch.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  string(field: number, value: string): void {
    this.ensure(10 + value.length * 3);
    this.rawVarint(field * 8 + WIRE_BYTES);
    if (value.length < 42) {
      // At most 127 bytes of UTF-8: the length fits the byte reserved for it.
      const at = this.pos++;
      const written = scratch.write(value, this.pos, 'utf8');
      scratch[at] = written;
      this.pos += written;
      return;
    }
    const length = Buffer.byteLength(value, 'utf8');
    this.rawVarint(length);
    this.pos += scratch.write(value, this.pos, 'utf8');
  }

  /** Opens a sub-message; pass the result to `close`. */
  open(field: number): number {
    this.ensure(6);
    this.rawVarint(field * 8 + WIRE_BYTES);
    this.pos += 1;
    return this.pos;
  }

  close(start: number): void {
    const length = this.pos - start;
    if (length < 0x80) {
      scratch[start - 1] = length;
      return;
    }
    const extra = varintSize(length) - 1;
    this.ensure(extra);
    scratch.copyWithin(start + extra, start, this.pos);
    this.pos = start - 1;
    this.rawVarint(length);
    this.pos += length;
  }

  /** The written bytes (prefix included) as a new buffer of exactly that size. */
  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    scratch.copy(out, 0, 0, this.pos);
    return out;
  }

  get length(): number {
    return this.pos - this.prefix;
  }
}
