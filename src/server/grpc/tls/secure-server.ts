// The gRPC listener over TLS: HTTP/2 only, TLS 1.2 at least, mutual TLS and the client SAN check.
import type tls from 'node:tls';
import { TLSSocket } from 'node:tls';
import type { H2Session } from '../../h2';
import type { Logger } from '../../../lib/logger';
import type { GrpcServerTlsSettings } from '../../../settings';
import type { StatsStore } from '../../../stats';
import { STAT } from '../../../stats';
import { TLS_VERSION_FLOOR } from './credentials';
import { TlsReloader } from './reloader';

/** The DNS names among a certificate's subject alternative names (`DNS:a, DNS:b, IP Address:…`). */
export function dnsNames(subjectAltName: string | undefined): string[] {
  if (subjectAltName === undefined || subjectAltName === '') return [];
  return subjectAltName
    .split(', ')
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice('DNS:'.length).replace(/^"(.*)"$/, '$1'));
}

export interface SecureGrpcServer<S extends tls.Server = tls.Server> {
  readonly server: S;
  /**
   * False (and the connection is cut, the refusal logged) when GRPC_CLIENT_TLS_SAN is set and
   * the client certificate does not carry that DNS name. Call it first in the 'session' listener.
   */
  admits(session: H2Session): boolean;
  /** Stops watching the files. */
  close(): void;
}

/**
 * The secure HTTP/2 server, made by `create` from the TLS options (tls.createServer for the
 * own HTTP/2, node:http2's createSecureServer for GRPC_HTTP2=node). The handshake itself
 * refuses a client without a certificate signed by GRPC_CLIENT_TLS_CACERT when that is set.
 * Node has no hook inside the handshake for the SAN check, so it runs as the connection is set
 * up, before any call on it is read.
 */
export function createSecureGrpcServer<S extends tls.Server>(
  settings: GrpcServerTlsSettings,
  stats: StatsStore,
  logger: Logger,
  create: (options: tls.TlsOptions) => S,
): SecureGrpcServer<S> {
  const isMutual = settings.clientCaFile !== undefined;
  const reloader = new TlsReloader({
    settings,
    logger,
    reloadErrors: stats.counter(STAT.tlsReloadError),
    reloadSuccesses: stats.counter(STAT.tlsReloadSuccess),
    apply: (credentials) => {
      // Only called on a change after start-up, when the server below exists.
      server.setSecureContext({ ...credentials.context, minVersion: TLS_VERSION_FLOOR });
    },
  });
  const server = create({
    ...reloader.credentials.context,
    minVersion: TLS_VERSION_FLOOR,
    ALPNProtocols: ['h2'],
    requestCert: isMutual,
    rejectUnauthorized: isMutual,
  });
  // Counted, not logged: a port scanner or a misconfigured proxy would flood the log.
  const handshakeErrors = stats.counter(STAT.tlsHandshakeError);
  server.on('tlsClientError', () => {
    handshakeErrors.inc();
  });
  const requiredSan = settings.clientSan;
  const sanRefusals = stats.counter(STAT.tlsClientSanRefused);
  return {
    server,
    admits: (session) => {
      if (requiredSan === undefined) return true;
      const socket = session.socket;
      const certificate = socket instanceof TLSSocket ? socket.getPeerCertificate() : undefined;
      const presented = dnsNames(certificate?.subjectaltname);
      if (presented.includes(requiredSan)) return true;
      sanRefusals.inc();
      logger.warn('refused a gRPC client whose certificate lacks the required SAN', {
        required: requiredSan,
        presented: presented.length === 0 ? '(no DNS names)' : presented.join(','),
        remote: socket.remoteAddress,
      });
      session.destroy();
      return false;
    },
    close: () => {
      reloader.close();
    },
  };
}
