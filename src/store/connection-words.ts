// Why a connection to a backend failed, in an operator's words rather than a driver's sentence.
import { describeError } from '../lib/errors';

/** Node's system error codes a connection meets, as an operator would say them. */
const SYSTEM_ERRORS: Readonly<Record<string, string>> = Object.freeze({
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ECONNABORTED: 'connection aborted',
  EPIPE: 'connection broken',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ENOENT: 'no such socket file',
  EACCES: 'permission denied',
});

function codeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  return typeof err.code === 'string' ? err.code : undefined;
}

/**
 * The reason a connection failed: a system error's code in words (`connection refused`), a TLS
 * failure as `TLS: <Node's message>`, anything else as its message.
 */
export function connectionFailure(err: unknown): string {
  const code = codeOf(err);
  const words = code === undefined ? undefined : SYSTEM_ERRORS[code];
  if (words !== undefined) return words;
  if (code !== undefined && (code.startsWith('ERR_TLS') || code.includes('CERT')))
    return `TLS: ${describeError(err)}`;
  return describeError(err);
}
