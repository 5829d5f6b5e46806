// HPACK's Huffman code (RFC 7541 section 5.2 and Appendix B), decoding only: answers are sent
// as plain literals, while clients (nghttp2, gRPC C-core, grpc-js) Huffman-code what they send.
import { HpackError } from './hpack-error';
import { BYTE_CLASS } from './request-rules';

/**
 * Code lengths in bits for the symbols 0–255, from RFC 7541 Appendix B; EOS (256) is 30 bits.
 * The code is canonical (codes of one length are consecutive, in symbol order, and follow on
 * from the shorter ones), so the lengths alone determine every code.
 */
// prettier-ignore
const CODE_LENGTHS: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
  5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
  7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  30,
];

const EOS = 256;
const MAX_BITS = 30;

/** The canonical code's decoding tables: per length, its first code and its symbols. */
interface Canonical {
  /** firstCode[n]: the numerically smallest code of n bits. */
  readonly firstCode: Int32Array;
  /** count[n]: how many codes have n bits. */
  readonly count: Int32Array;
  /** offset[n]: where the n-bit codes' symbols start in `symbols`. */
  readonly offset: Int32Array;
  /** Symbols ordered by code length, then by value: the order of their codes. */
  readonly symbols: Uint16Array;
}

function canonical(lengths: readonly number[]): Canonical {
  const count = new Int32Array(MAX_BITS + 1);
  for (const n of lengths) count[n] = (count[n] ?? 0) + 1;
  const firstCode = new Int32Array(MAX_BITS + 1);
  const offset = new Int32Array(MAX_BITS + 1);
  let code = 0;
  let position = 0;
  for (let n = 1; n <= MAX_BITS; n++) {
    code = (code + (count[n - 1] ?? 0)) << 1;
    firstCode[n] = code;
    offset[n] = position;
    position += count[n] ?? 0;
  }
  const symbols = new Uint16Array(lengths.length);
  const next = Int32Array.from(offset);
  lengths.forEach((n, symbol) => {
    symbols[next[n] ?? 0] = symbol;
    next[n] = (next[n] ?? 0) + 1;
  });
  return { firstCode, count, offset, symbols };
}

const TABLE = canonical(CODE_LENGTHS);

/** The code of every symbol, for tests and for anyone encoding: derived, not stored. */
export function huffmanCode(symbol: number): { readonly code: number; readonly bits: number } {
  const bits = CODE_LENGTHS[symbol];
  if (bits === undefined) throw new RangeError(`no Huffman symbol ${String(symbol)}`);
  const { firstCode, offset, symbols } = TABLE;
  const start = offset[bits] ?? 0;
  const rank = symbols.subarray(start).indexOf(symbol);
  return { code: (firstCode[bits] ?? 0) + rank, bits };
}

/** Where a decoder leaves the byte classes (request-rules.ts) of what it decoded. */
export interface ByteClasses {
  classes: number;
}

/**
 * Decodes `buf[start, end)` to a latin1 string. Refuses the EOS symbol, padding longer than
 * seven bits and padding that is not a prefix of EOS (all ones), as section 5.2 requires.
 */
export function decodeHuffman(
  buf: Buffer,
  start: number,
  end: number,
  classed?: ByteClasses,
): string {
  const { firstCode, count, offset, symbols } = TABLE;
  let classes = 0;
  let out = '';
  let code = 0;
  let bits = 0;
  for (let i = start; i < end; i++) {
    const byte = buf[i] ?? 0;
    for (let bit = 7; bit >= 0; bit--) {
      code = (code << 1) | ((byte >> bit) & 1);
      bits += 1;
      const rank = code - (firstCode[bits] ?? 0);
      if (rank >= 0 && rank < (count[bits] ?? 0)) {
        const symbol = symbols[(offset[bits] ?? 0) + rank] ?? EOS;
        if (symbol === EOS) throw new HpackError('a Huffman-coded string contains EOS');
        out += String.fromCharCode(symbol);
        classes |= BYTE_CLASS[symbol] ?? 0;
        code = 0;
        bits = 0;
      } else if (bits >= MAX_BITS) {
        throw new HpackError('a Huffman-coded string holds no valid code');
      }
    }
  }
  if (bits > 7 || code !== (1 << bits) - 1) {
    throw new HpackError('a Huffman-coded string ends in padding that is not EOS');
  }
  if (classed !== undefined) classed.classes = classes;
  return out;
}
