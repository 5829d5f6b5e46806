// A TLS-only redis-server on loopback with openssl-made certificates, stopped by its pid.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeCertificates, type Certificates } from './certs';
import { RedisNode } from './redis-node';

/** Settings that make an instance (REDIS_ or REDIS_PERSECOND_) trust and present these certs. */
export function tlsEnv(prefix: string, certs: Certificates): Record<string, string> {
  return {
    [`${prefix}TLS`]: 'true',
    [`${prefix}TLS_CACERT`]: certs.caCert,
    [`${prefix}TLS_CLIENT_CERT`]: certs.clientCert,
    [`${prefix}TLS_CLIENT_KEY`]: certs.clientKey,
  };
}

/**
 * No plain-text port at all. It listens on 127.0.0.1 and 127.0.0.2 with a certificate for
 * 127.0.0.1 only, so connecting to 127.0.0.2 is a hostname mismatch. Client certificates are
 * optional but, when presented, must be signed by its CA.
 */
export class TlsRedis {
  private constructor(
    readonly node: RedisNode,
    readonly certs: Certificates,
    private readonly dir: string,
  ) {}

  static async start(certs: Certificates = makeCertificates('127.0.0.1')): Promise<TlsRedis> {
    const dir = mkdtempSync(path.join(tmpdir(), 'rl-tls-redis-'));
    const node = await RedisNode.start({
      dir,
      tls: { certs, mode: 'only' },
      bind: ['127.0.0.1', '127.0.0.2'],
    });
    return new TlsRedis(node, certs, dir);
  }

  get port(): number {
    return this.node.port;
  }

  async destroy(): Promise<void> {
    await this.node.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
