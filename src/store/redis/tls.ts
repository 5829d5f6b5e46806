// TLS to Redis: connection options from the REDIS_TLS_* files, and start-up errors that name them.
import { readFileSync } from 'node:fs';
import { createSecureContext, rootCertificates, type ConnectionOptions } from 'node:tls';
import { describeError } from '../../lib/errors';
import type { ClientTlsSettings } from '../../settings';

/** A TLS file that cannot be used, with the setting that names it. */
export class TlsFileError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`);
    this.name = 'TlsFileError';
  }
}

function readPem(setting: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err: unknown) {
    throw new TlsFileError(setting, `cannot read ${JSON.stringify(file)}: ${describeError(err)}`);
  }
}

/** Node's context check, so a bad file stops start-up here rather than failing every handshake. */
function checkContext(setting: string, file: string, options: ConnectionOptions): void {
  try {
    createSecureContext(options);
  } catch (err: unknown) {
    throw new TlsFileError(setting, `${JSON.stringify(file)} is not usable: ${describeError(err)}`);
  }
}

/**
 * Options for tls.connect. The server's chain is always verified: against the system's CAs
 * plus REDIS_TLS_CACERT when given (the reference adds the file to the system pool too).
 * REDIS_TLS_SKIP_HOSTNAME_VERIFICATION skips only the name check, as in the reference. One
 * secure context serves every connection: building one from the ~140 system CAs costs more than
 * the handshake itself, and a cluster opens a connection per node.
 * Throws a TlsFileError naming the setting of an unreadable or unusable file.
 */
export function tlsOptions(tls: ClientTlsSettings, prefix: string): ConnectionOptions {
  let ca: string[] | undefined;
  if (tls.caFile !== undefined) {
    const pem = readPem(`${prefix}TLS_CACERT`, tls.caFile);
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
      throw new TlsFileError(
        `${prefix}TLS_CACERT`,
        `${JSON.stringify(tls.caFile)} holds no PEM certificate`,
      );
    }
    checkContext(`${prefix}TLS_CACERT`, tls.caFile, { ca: pem });
    ca = [...rootCertificates, pem];
  }
  let pair: { cert: string; key: string } | undefined;
  if (tls.certFile !== undefined && tls.keyFile !== undefined) {
    const cert = readPem(`${prefix}TLS_CLIENT_CERT`, tls.certFile);
    const key = readPem(`${prefix}TLS_CLIENT_KEY`, tls.keyFile);
    checkContext(`${prefix}TLS_CLIENT_CERT`, tls.certFile, { cert });
    checkContext(`${prefix}TLS_CLIENT_KEY`, tls.keyFile, { cert, key });
    pair = { cert, key };
  }
  return {
    rejectUnauthorized: true,
    secureContext: createSecureContext({ ...(ca === undefined ? {} : { ca }), ...pair }),
    ...(tls.skipHostnameVerification ? { checkServerIdentity: () => undefined } : {}),
  };
}

const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);

function codeOf(err: unknown): string {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : '';
}

/**
 * What the operator should change after a failed connection, naming the setting; undefined
 * when the error says nothing about TLS.
 */
export function tlsHint(err: unknown, prefix: string, isTls: boolean): string | undefined {
  const code = codeOf(err);
  const message = describeError(err);
  if (!isTls) {
    // A TLS-only server closes a plain connection at once; say so instead of "connection closed".
    return /ECONNRESET|Connection is closed|socket hang up/.test(`${code} ${message}`)
      ? `if the server only accepts TLS, set ${prefix}TLS=true`
      : undefined;
  }
  if (UNTRUSTED.has(code)) {
    return `the server's certificate is not signed by a trusted CA: set ${prefix}TLS_CACERT to the CA that signed it`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `the server's certificate does not name the host connected to: connect by a name it holds, or set ${prefix}TLS_SKIP_HOSTNAME_VERIFICATION=true`;
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return "the server's certificate is outside its validity period";
  }
  if (/ALERT_(UNKNOWN_CA|BAD_CERTIFICATE|CERTIFICATE_REQUIRED|CERTIFICATE_UNKNOWN)/.test(code)) {
    return `the server refused the client certificate: check ${prefix}TLS_CLIENT_CERT and ${prefix}TLS_CLIENT_KEY`;
  }
  if (code === 'ECONNRESET') {
    // With TLS 1.3 a server checks the client certificate after the handshake and just closes.
    return `the server closed the TLS connection: it may refuse the client certificate (check ${prefix}TLS_CLIENT_CERT and ${prefix}TLS_CLIENT_KEY, signed by a CA the server trusts)`;
  }
  if (code === 'ETIMEDOUT') {
    // A plain-text server reads a ClientHello as a half-sent command and waits for the rest.
    return `no TLS session within ${prefix}TIMEOUT: check that the server speaks TLS at ${prefix}URL`;
  }
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') {
    return `the server does not speak TLS on this port: check ${prefix}URL or set ${prefix}TLS=false`;
  }
  if (/^ERR_SSL_|^ERR_TLS_/.test(code))
    return `the TLS handshake failed: check the ${prefix}TLS_* files`;
  return undefined;
}
