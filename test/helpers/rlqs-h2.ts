// StreamRateLimitQuotas over node:http2 without a gRPC library, from a chosen loopback address
// (Envoys on separate hosts are separate peers): reports encoded with the api/ protos and framed
// by hand, responses unframed and decoded as they arrive, and the status the stream ended with.
import http2 from 'node:http2';
import net from 'node:net';
import { messageType } from '../../src/lib/proto';
import { RLQS_PROTO, STREAM_RATE_LIMIT_QUOTAS } from '../../src/quota';
import { frame } from './h2-raw';
import type { WireReports, WireResponse } from './rlqs-wire';

const PACKAGE = 'envoy.service.rate_limit_quota.v3';

/** A connection to 127.0.0.1:`port` from `localAddress` (any 127.x.y.z on Linux). */
export function connectFrom(port: number, localAddress: string): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`, {
      createConnection: () => net.connect({ host: '127.0.0.1', port, localAddress }),
    });
    session.on('error', () => undefined);
    session.once('remoteSettings', () => {
      resolve(session);
    });
    session.once('error', reject);
  });
}

/** Encodes one RateLimitQuotaUsageReports as a gRPC message (length-prefixed). */
export function reportFrame(reports: WireReports): Buffer {
  const type = messageType(RLQS_PROTO, `${PACKAGE}.RateLimitQuotaUsageReports`);
  return frame(Buffer.from(type.encode(type.fromObject(reports)).finish()));
}

/** One stream: what it was sent, and how it ended. */
export class RawQuotaStream {
  readonly responses: WireResponse[] = [];
  /** The grpc-status and grpc-message it ended with; undefined while open. */
  ended: { readonly code: number; readonly message: string } | undefined;
  readonly stream: http2.ClientHttp2Stream;
  private pending = Buffer.alloc(0);

  constructor(session: http2.ClientHttp2Session) {
    this.stream = session.request({
      ':method': 'POST',
      ':path': STREAM_RATE_LIMIT_QUOTAS,
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    this.stream.on('error', () => undefined);
    this.stream.on('response', (headers) => {
      this.endWith(headers);
    });
    this.stream.on('trailers', (headers) => {
      this.endWith(headers);
    });
    this.stream.on('data', (chunk: Buffer) => {
      this.take(chunk);
    });
    this.stream.on('close', () => {
      this.ended ??= { code: -1, message: `closed (RST_STREAM ${this.stream.rstCode})` };
    });
  }

  /** Writes one report; false when the stream's buffer is full (wait for 'drain'). */
  report(reports: WireReports): boolean {
    return this.stream.write(reportFrame(reports));
  }

  /** Whether some response assigned the bucket with these pairs. */
  isAssigned(bucket: Readonly<Record<string, string>>): boolean {
    const key = JSON.stringify(Object.entries(bucket).sort());
    return this.responses.some((r) =>
      (r.bucketAction ?? []).some(
        (a) =>
          a.quotaAssignmentAction !== undefined &&
          JSON.stringify(Object.entries(a.bucketId?.bucket ?? {}).sort()) === key,
      ),
    );
  }

  close(): void {
    this.stream.close();
  }

  private endWith(headers: http2.IncomingHttpHeaders): void {
    const status = headers['grpc-status'];
    if (status === undefined) return;
    const message = headers['grpc-message'];
    this.ended = {
      code: Number(status),
      message: decodeURIComponent(typeof message === 'string' ? message : ''),
    };
  }

  private take(chunk: Buffer): void {
    const type = messageType(RLQS_PROTO, `${PACKAGE}.RateLimitQuotaResponse`);
    this.pending = Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 5) {
      const length = this.pending.readUInt32BE(1);
      if (this.pending.length < 5 + length) return;
      const message = this.pending.subarray(5, 5 + length);
      this.pending = this.pending.subarray(5 + length);
      this.responses.push(
        type.toObject(type.decode(message), {
          longs: Number,
          enums: String,
          defaults: false,
          oneofs: true,
        }),
      );
    }
  }
}
