// The protobuf wire format, just enough of it for the hand-written codecs of the hot path.
// Decoding works on the received buffer in place; encoding writes into one scratch buffer
// that is reused across calls, so a message costs one exactly sized copy at the end.

export const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
const WIRE_FIXED32 = 5;

/** Bytes that are not a well-formed message of the expected type. */
export class MalformedMessage extends Error {
  constructor(what: string) {
    super(what);
    this.name = 'MalformedMessage';
  }
}

/** A cursor over one message (or one length-delimited sub-message) of a buffer. */
export class ProtoReader {
  pos: number;

  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  get isDone(): boolean {
    return this.pos >= this.end;
  }

  /**
   * A varint as a number. Values past 2^53 lose precision; fields that must fit a smaller
   * range are checked by their caller, and 64-bit values this large are refused there.
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
        this.pos = pos;
        return value;
      }
      scale *= 0x80;
    }
    throw new MalformedMessage('a varint is longer than ten bytes');
  }

  /** Starts a length-delimited field; returns where it ends and leaves pos at its start. */
  delimited(): number {
    const length = this.varint();
    const end = this.pos + length;
    if (end > this.end) throw new MalformedMessage('a field runs past the end of the message');
    return end;
  }

  string(): string {
    const end = this.delimited();
    const start = this.pos;
    this.pos = end;
    return start === end ? '' : this.buf.toString('utf8', start, end);
  }

  /** Skips a field of the given wire type. */
  skip(wireType: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_FIXED64:
        this.pos += 8;
        break;
      case WIRE_BYTES:
        this.pos = this.delimited();
        return;
      case WIRE_FIXED32:
        this.pos += 4;
        break;
      default:
        throw new MalformedMessage(`wire type ${wireType} is not supported`);
    }
    if (this.pos > this.end) throw new MalformedMessage('a field runs past the end of the message');
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
