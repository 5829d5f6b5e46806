// What makes a request malformed (RFC 9113 sections 8.1.1, 8.2 and 8.3): checked on each
// decoded header block before any handler sees it; a malformed request is a stream error.
/** A request's header fields by name (hpack.ts's H2Headers). */
type H2Headers = Readonly<Record<string, string>>;

/** Fields a request may not carry: connection-specific ones (section 8.2.2). */
const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);
const REQUEST_PSEUDO = new Set([':method', ':scheme', ':path', ':authority']);

/** Bytes a field name may hold, as nghttp2 allows them: a lower-case token (RFC 9110 5.6.2). */
const NAME_BYTES = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz")
  NAME_BYTES[c.charCodeAt(0)] = 1;
/** Bytes a field value may hold: HTAB, visible ASCII, SP and obs-text; no controls. */
const VALUE_BYTES = new Uint8Array(256).fill(1);
for (let c = 0; c < 0x20; c++) if (c !== 0x09) VALUE_BYTES[c] = 0;
VALUE_BYTES[0x7f] = 0;

function isWhitespace(code: number | undefined): boolean {
  return code === 0x20 || code === 0x09;
}

/**
 * The character rule a field breaks, if any (section 8.2.1). Checked once per literal a
 * client sends: a field it refers to again from the dynamic table was checked on the way in.
 */
export function checkChars(name: string, value: string): string | undefined {
  if (name.length === 0) return 'a header field has an empty name';
  if (name.charCodeAt(0) !== 0x3a) {
    for (let i = 0; i < name.length; i++) {
      if (NAME_BYTES[name.charCodeAt(i)] !== 1)
        return `the header name ${name} has a forbidden byte`;
    }
  }
  for (let i = 0; i < value.length; i++) {
    if (VALUE_BYTES[value.charCodeAt(i)] !== 1) return `the value of ${name} has a control byte`;
  }
  if (isWhitespace(value.charCodeAt(0)) || isWhitespace(value.charCodeAt(value.length - 1))) {
    return `the value of ${name} starts or ends with whitespace`;
  }
  return undefined;
}

/** The rule of sections 8.2–8.3 a field breaks where it stands in its block, if any. */
export function checkPlace(
  name: string,
  value: string,
  seen: H2Headers,
  isRegularSeen: boolean,
  isTrailers: boolean,
): string | undefined {
  if (name.charCodeAt(0) === 0x3a) {
    if (isTrailers) return `trailers carry the pseudo-header ${name}`;
    if (!REQUEST_PSEUDO.has(name)) return `the pseudo-header ${name} is not a request's`;
    if (isRegularSeen) return `the pseudo-header ${name} follows a regular field`;
    if (seen[name] !== undefined) return `the pseudo-header ${name} appears twice`;
    return undefined;
  }
  if (CONNECTION_SPECIFIC.has(name)) return `the connection-specific field ${name}`;
  if (name === 'te' && value !== 'trailers') return 'te carries something other than trailers';
  return undefined;
}

/** The pseudo-headers a request must carry (section 8.3.1), as nghttp2 checks them. */
export function checkRequest(headers: H2Headers): string | undefined {
  const method = headers[':method'];
  if (method === undefined || method.length === 0) return 'the request has no :method';
  const path = headers[':path'];
  const scheme = headers[':scheme'];
  if (method === 'CONNECT') {
    if (path !== undefined || scheme !== undefined) return 'CONNECT with :path or :scheme';
    if (headers[':authority'] === undefined) return 'CONNECT without :authority';
    return undefined;
  }
  if (scheme === undefined || scheme.length === 0) return 'the request has no :scheme';
  if (path === undefined || path.length === 0) return 'the request has no :path';
  if (path.charCodeAt(0) !== 0x2f && !(method === 'OPTIONS' && path === '*')) {
    return 'the :path is neither absolute nor *';
  }
  const length = headers['content-length'];
  if (length !== undefined && !/^[0-9]{1,15}$/.test(length)) return 'a malformed content-length';
  return undefined;
}

/** The body length a request declared, once checkRequest accepted it. */
export function declaredLength(headers: H2Headers): number | undefined {
  const length = headers['content-length'];
  return length === undefined ? undefined : Number(length);
}
