// The gRPC listener's TLS credentials read from their files and checked before they are served.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { describeError } from '../../../lib/errors';
import type { GrpcServerTlsSettings } from '../../../settings';

/** The files of the credentials, by the setting that names each. */
export type TlsFileSetting =
  'GRPC_SERVER_TLS_CERT' | 'GRPC_SERVER_TLS_KEY' | 'GRPC_CLIENT_TLS_CACERT';

/** Credentials that were read, parsed and found to belong together. */
export interface TlsCredentials {
  /** What the secure context is made of: certificate chain, key and client CA when set. */
  readonly context: tls.SecureContextOptions;
  /** The serial number of the leaf certificate, for logs. */
  readonly serial: string;
  /** When the leaf certificate expires, as the certificate says. */
  readonly validTo: string;
  /** The bytes of every file, to tell a real change from a touched file. */
  readonly fingerprint: string;
}

/** Why the files cannot be served: the file at fault, its setting and the reason. */
export class TlsFileError extends Error {
  constructor(
    readonly setting: TlsFileSetting,
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${setting} (${file}): ${reason}`);
    this.name = 'TlsFileError';
  }
}

/** The listener's fixed TLS options: HTTP/2 alone (ALPN h2), TLS 1.2 at least. */
export const TLS_VERSION_FLOOR = 'TLSv1.2';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function read(setting: TlsFileSetting, file: string): Buffer | TlsFileError {
  try {
    return readFileSync(file);
  } catch (err: unknown) {
    return new TlsFileError(setting, file, `cannot read the file: ${describeError(err)}`);
  }
}

/** Every certificate of a PEM bundle; an error when there is none or one does not parse. */
function certificates(
  setting: TlsFileSetting,
  file: string,
  pem: Buffer,
): X509Certificate[] | TlsFileError {
  const blocks = pem.toString('utf8').match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0)
    return new TlsFileError(setting, file, 'no PEM certificate in the file (empty or cut short?)');
  const out: X509Certificate[] = [];
  for (const block of blocks) {
    try {
      out.push(new X509Certificate(block));
    } catch (err: unknown) {
      return new TlsFileError(setting, file, `a certificate does not parse: ${describeError(err)}`);
    }
  }
  return out;
}

function privateKey(file: string, pem: Buffer): KeyObject | TlsFileError {
  try {
    return createPrivateKey(pem);
  } catch (err: unknown) {
    return new TlsFileError(
      'GRPC_SERVER_TLS_KEY',
      file,
      `the private key does not parse: ${describeError(err)}`,
    );
  }
}

/**
 * Reads and checks the files: every certificate parses, the key parses and matches the leaf
 * certificate, and OpenSSL accepts the whole as a context. Returns the credentials, or the
 * TlsFileError naming the file at fault; never throws.
 */
export function readCredentials(settings: GrpcServerTlsSettings): TlsCredentials | TlsFileError {
  const cert = read('GRPC_SERVER_TLS_CERT', settings.certFile);
  if (cert instanceof TlsFileError) return cert;
  const key = read('GRPC_SERVER_TLS_KEY', settings.keyFile);
  if (key instanceof TlsFileError) return key;
  const ca =
    settings.clientCaFile === undefined
      ? undefined
      : read('GRPC_CLIENT_TLS_CACERT', settings.clientCaFile);
  if (ca instanceof TlsFileError) return ca;

  const chain = certificates('GRPC_SERVER_TLS_CERT', settings.certFile, cert);
  if (chain instanceof TlsFileError) return chain;
  const leaf = chain[0];
  if (leaf === undefined) throw new Error('a parsed chain has at least one certificate');
  const keyObject = privateKey(settings.keyFile, key);
  if (keyObject instanceof TlsFileError) return keyObject;
  if (!leaf.checkPrivateKey(keyObject))
    return new TlsFileError(
      'GRPC_SERVER_TLS_KEY',
      settings.keyFile,
      `the private key does not match the certificate in ${settings.certFile}`,
    );
  if (ca !== undefined && settings.clientCaFile !== undefined) {
    const cas = certificates('GRPC_CLIENT_TLS_CACERT', settings.clientCaFile, ca);
    if (cas instanceof TlsFileError) return cas;
  }
  const context: tls.SecureContextOptions = ca === undefined ? { cert, key } : { cert, key, ca };
  try {
    tls.createSecureContext({ ...context, minVersion: TLS_VERSION_FLOOR });
  } catch (err: unknown) {
    return new TlsFileError(
      'GRPC_SERVER_TLS_CERT',
      settings.certFile,
      `OpenSSL refuses the credentials: ${describeError(err)}`,
    );
  }
  return {
    context,
    serial: leaf.serialNumber,
    validTo: leaf.validTo,
    fingerprint: [cert, key, ca ?? Buffer.alloc(0)].map((b) => b.toString('base64')).join('.'),
  };
}
