// Which memcached server holds a key: CRC-32 (IEEE) of the key modulo the server count, as the
// reference's client (gomemcache's ServerList) picks, so both services count a key in one place.
import zlib from 'node:zlib';

const TABLE = ((): Uint32Array => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32Table(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (TABLE[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** zlib.crc32 arrived in Node 20.15; the table covers the earlier Node 20 releases. */
const nativeCrc32 = (zlib as { crc32?: (data: string | Uint8Array) => number }).crc32;

/** CRC-32 (IEEE 802.3, the checksum Go's crc32.ChecksumIEEE computes) of the key's UTF-8 bytes. */
export function crc32(key: string): number {
  return nativeCrc32 !== undefined ? nativeCrc32(key) >>> 0 : crc32Table(Buffer.from(key, 'utf8'));
}

/** The same checksum without zlib, for the test that pins both to known values. */
export const crc32Portable = (key: string): number => crc32Table(Buffer.from(key, 'utf8'));

/** Index of the server that holds `key` among `count` servers (one server: always it). */
export function serverIndexFor(key: string, count: number): number {
  if (count <= 1) return 0;
  return crc32(key) % count;
}
