// ratelimit-client's channel credentials: plaintext, TLS, or mutual TLS from the flags' files.
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { describeError } from '../lib/errors';

export interface ClientTlsFlags {
  readonly useTls: boolean;
  readonly caCert: string;
  readonly clientCert: string;
  readonly clientKey: string;
  readonly serverName: string;
}

/** Credentials and channel options; an error message naming the flag when a file is wrong. */
export function channelCredentials(
  flags: ClientTlsFlags,
): { creds: grpc.ChannelCredentials; options: grpc.ClientOptions } | string {
  const isTls =
    flags.useTls ||
    flags.caCert !== '' ||
    flags.clientCert !== '' ||
    flags.clientKey !== '' ||
    flags.serverName !== '';
  if (!isTls) return { creds: grpc.credentials.createInsecure(), options: {} };
  if ((flags.clientCert === '') !== (flags.clientKey === ''))
    return '-tls_client_cert and -tls_client_key go together: give both or neither';
  const files: Record<string, Buffer | null> = {};
  for (const [flag, file] of [
    ['tls_ca_cert', flags.caCert],
    ['tls_client_cert', flags.clientCert],
    ['tls_client_key', flags.clientKey],
  ] as const) {
    try {
      files[flag] = file === '' ? null : readFileSync(file);
    } catch (err: unknown) {
      return `-${flag} ${file}: ${describeError(err)}`;
    }
  }
  const creds = grpc.credentials.createSsl(
    files.tls_ca_cert ?? null,
    files.tls_client_key ?? null,
    files.tls_client_cert ?? null,
  );
  const options: grpc.ClientOptions =
    flags.serverName === '' ? {} : { 'grpc.ssl_target_name_override': flags.serverName };
  return { creds, options };
}
