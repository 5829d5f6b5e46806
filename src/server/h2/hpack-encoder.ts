// HPACK for answers: literals that never enter the dynamic table, so the encoder keeps no
// state; the table size update a client that lowers SETTINGS_HEADER_TABLE_SIZE expects is
// send-side.ts's.
import { STATIC_TABLE } from './hpack-static';

/** Header fields to send: names in lower case, values turned into strings. */
export type OutgoingHeaders = Readonly<Record<string, string | number>>;

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
