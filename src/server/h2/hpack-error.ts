// A header block this connection cannot decode: HPACK's state is then lost for the whole
// connection, which ends with COMPRESSION_ERROR (RFC 9113 section 4.3).
export class HpackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HpackError';
  }
}
