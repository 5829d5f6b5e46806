// MEMCACHE_TLS and its files as Node TLS options, read once when the store opens.
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { describeError } from '../../lib/errors';
import { SettingsError, type ClientTlsSettings } from '../../settings';

function read(setting: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err: unknown) {
    throw new SettingsError([{ setting, message: `cannot read ${file}: ${describeError(err)}` }]);
  }
}

/**
 * As the reference: a CA file adds to the system's trusted roots; a certificate and key are
 * presented to the server; skipping hostname verification still verifies the chain.
 * Throws SettingsError naming the setting whose file cannot be read.
 */
export function memcachedTlsOptions(settings: ClientTlsSettings): tls.ConnectionOptions {
  const options: tls.ConnectionOptions = { rejectUnauthorized: true };
  if (settings.caFile !== undefined) {
    options.ca = [...tls.rootCertificates, read('MEMCACHE_TLS_CACERT', settings.caFile).toString()];
  }
  if (settings.certFile !== undefined && settings.keyFile !== undefined) {
    options.cert = read('MEMCACHE_TLS_CLIENT_CERT', settings.certFile);
    options.key = read('MEMCACHE_TLS_CLIENT_KEY', settings.keyFile);
  }
  if (settings.serverName !== undefined) options.servername = settings.serverName;
  if (settings.skipHostnameVerification) options.checkServerIdentity = () => undefined;
  return options;
}
