// What makes a request malformed (RFC 9113 sections 8.1.1, 8.2 and 8.3): checked on each
// decoded header block before any handler sees it; a malformed request is a stream error.

/** A byte a field name may not hold: all but a lower-case token (RFC 9110 5.6.2), as nghttp2. */
export const NOT_TOKEN = 1;
/** A control byte other than HTAB, which no value may hold. */
export const CONTROL = 2;

/**
 * The classes of each byte, OR-ed together as a literal is read. The bytes are classed where
 * they are read, in the block or as Huffman symbols come out: a scan of the string afterwards,
 * with a RegExp or charCodeAt, costs several times more per character on every request.
 */
export const BYTE_CLASS = (() => {
  const table = new Uint8Array(256).fill(NOT_TOKEN);
  for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz") {
    table[c.charCodeAt(0)] = 0;
  }
  for (let byte = 0; byte < 0x20; byte++) if (byte !== 0x09) table[byte] = NOT_TOKEN | CONTROL;
  table[0x7f] = NOT_TOKEN | CONTROL;
  return table;
})();

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/**
 * The character rule a literal name breaks, if any (section 8.2.1), given its byte classes.
 * A name from the static table needs no check, and one from the dynamic table was checked on
 * the way in.
 */
export function checkName(name: string, classes: number): string | undefined {
  if (name.length === 0) return 'a header field has an empty name';
  // Pseudo-header names are checked against the four a request may have.
  if (name.charCodeAt(0) !== 0x3a && (classes & NOT_TOKEN) !== 0) {
    return `the header name ${name} has a forbidden byte`;
  }
  return undefined;
}

/**
 * The character rule a literal value breaks, if any (section 8.2.1), given its byte classes.
 * Checked once per literal a client sends: a field it refers to again from the dynamic table
 * was checked on the way in.
 */
export function checkValue(name: string, value: string, classes: number): string | undefined {
  if ((classes & CONTROL) !== 0) return `the value of ${name} has a control byte`;
  if (isWhitespace(value.charCodeAt(0)) || isWhitespace(value.charCodeAt(value.length - 1))) {
    return `the value of ${name} starts or ends with whitespace`;
  }
  return undefined;
}

/** The rule a regular field breaks, if any (section 8.2.2): connection-specific fields. */
export function checkRegular(name: string, value: string): string | undefined {
  switch (name) {
    case 'connection':
    case 'keep-alive':
    case 'proxy-connection':
    case 'transfer-encoding':
    case 'upgrade':
      return `the connection-specific field ${name}`;
    case 'te':
      return value === 'trailers' ? undefined : 'te carries something other than trailers';
    default:
      return undefined;
  }
}

/** A request's pseudo-headers and content-length, as its block was decoded. */
export interface RequestShape {
  readonly method: string | undefined;
  readonly scheme: string | undefined;
  readonly path: string | undefined;
  readonly authority: string | undefined;
  readonly contentLength: string | undefined;
}

/** The pseudo-headers a request must carry (section 8.3.1), as nghttp2 checks them. */
export function checkRequest(request: RequestShape): string | undefined {
  const { method, path, scheme } = request;
  if (method === undefined || method.length === 0) return 'the request has no :method';
  if (method === 'CONNECT') {
    if (path !== undefined || scheme !== undefined) return 'CONNECT with :path or :scheme';
    if (request.authority === undefined) return 'CONNECT without :authority';
    return undefined;
  }
  if (scheme === undefined || scheme.length === 0) return 'the request has no :scheme';
  if (path === undefined || path.length === 0) return 'the request has no :path';
  if (path.charCodeAt(0) !== 0x2f && !(method === 'OPTIONS' && path === '*')) {
    return 'the :path is neither absolute nor *';
  }
  const length = request.contentLength;
  if (length !== undefined && !/^[0-9]{1,15}$/.test(length)) return 'a malformed content-length';
  return undefined;
}
