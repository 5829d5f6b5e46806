// Which memcached server holds a key: CRC-32 (IEEE) of the key modulo the server count, as the
// reference's client (gomemcache's ServerList) picks, so both services count a key in one place.
import zlib from 'node:zlib';

/** CRC-32 (IEEE 802.3, the checksum Go's crc32.ChecksumIEEE computes) of the key's UTF-8 bytes. */
export function crc32(key: string): number {
  return zlib.crc32(key) >>> 0;
}

/** Index of the server that holds `key` among `count` servers (one server: always it). */
export function serverIndexFor(key: string, count: number): number {
  if (count <= 1) return 0;
  return crc32(key) % count;
}
