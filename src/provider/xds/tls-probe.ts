// Why the xDS server refused a TLS connection, asked of it directly: grpc-js reports a connection
// the server closes after the handshake (a client certificate it refuses) as "Failed to connect".
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { describeError } from '../../lib/errors';
import type { ClientTlsSettings } from '../../settings';

/** How long a probe waits for the server's verdict after the handshake. */
const PROBE_TIMEOUT_MS = 2000;

/** TLS alerts a server sends about the client's certificate (RFC 8446, 6.2). */
const CERTIFICATE_ALERTS = [
  'certificate required',
  'bad certificate',
  'unknown ca',
  'certificate unknown',
  'certificate expired',
  'certificate revoked',
  'unsupported certificate',
  'access denied',
];

/** A server that closes the handshake without an alert (Node's, for one) refuses a certificate so. */
const CLOSED_IN_HANDSHAKE =
  'the server closed the connection in the TLS handshake without an alert, as a server asking for client certificates does when it refuses one: check CONFIG_GRPC_XDS_CLIENT_TLS_CERT and the CA the server trusts';

/** An OpenSSL error in words: the alert the server sent and what it means for the client. */
function reasonOf(err: unknown): string {
  const message = describeError(err);
  if (/socket disconnected before secure TLS connection|ECONNRESET/.test(message))
    return CLOSED_IN_HANDSHAKE;
  const alert = /alert ([a-z ]+?)(?::|$)/.exec(message)?.[1];
  if (alert === undefined) return message;
  if (!CERTIFICATE_ALERTS.includes(alert)) return `the server sent the TLS alert '${alert}'`;
  return `the server refused this client's certificate (TLS alert '${alert}'): check CONFIG_GRPC_XDS_CLIENT_TLS_CERT and the CA the server trusts`;
}

function fileOrUndefined(file: string | undefined): Buffer | undefined {
  return file === undefined ? undefined : readFileSync(file);
}

/**
 * Opens a TLS connection to `serverUrl` (host:port) as the xDS client would (two at most) and
 * resolves with the reason the server refuses it, or undefined when it does not in bounded time.
 */
export async function tlsRefusalReason(
  serverUrl: string,
  settings: ClientTlsSettings,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<string | undefined> {
  // Under TLS 1.2 the server judges the client's certificate within the handshake, so its alert
  // fails the handshake itself; under 1.3 it comes after, and often only the close is seen.
  const reason = await probe(serverUrl, settings, timeoutMs, 'TLSv1.2');
  const isOnly13 = reason !== undefined && /protocol version|unsupported protocol/.test(reason);
  return isOnly13 ? probe(serverUrl, settings, timeoutMs, 'TLSv1.3') : reason;
}

function probe(
  serverUrl: string,
  settings: ClientTlsSettings,
  timeoutMs: number,
  maxVersion: tls.SecureVersion,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const colon = serverUrl.lastIndexOf(':');
    let socket: tls.TLSSocket;
    try {
      socket = tls.connect({
        host: serverUrl.slice(0, colon).replace(/^\[|\]$/g, ''),
        port: Number(serverUrl.slice(colon + 1)),
        ca: fileOrUndefined(settings.caFile),
        cert: fileOrUndefined(settings.certFile),
        key: fileOrUndefined(settings.keyFile),
        ALPNProtocols: ['h2'],
        maxVersion,
        ...(settings.serverName === undefined ? {} : { servername: settings.serverName }),
        ...(settings.skipHostnameVerification ? { checkServerIdentity: () => undefined } : {}),
      });
    } catch (err: unknown) {
      resolve(describeError(err));
      return;
    }
    const done = (reason: string | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reason);
    };
    const timer = setTimeout(() => {
      done(undefined);
    }, timeoutMs);
    timer.unref();
    socket.on('data', () => undefined);
    socket.once('error', (err: unknown) => {
      done(reasonOf(err));
    });
    socket.once('close', () => {
      done(CLOSED_IN_HANDSHAKE);
    });
  });
}
