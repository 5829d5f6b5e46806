// One StreamRateLimitQuotas stream from grpc-js (a client this project did not write), for
// tests that need an Envoy watching a bucket without the fleet's simulated traffic.
import * as grpc from '@grpc/grpc-js';
import { loadApi } from '../../src/lib/proto';
import { eventually } from './eventually';

type Duplex = grpc.ClientDuplexStream<unknown, unknown>;
type QuotaStub = grpc.Client & { StreamRateLimitQuotas(metadata: grpc.Metadata): Duplex };
type StubClass = new (address: string, credentials: grpc.ChannelCredentials) => QuotaStub;

function stubClass(): StubClass {
  const api = loadApi(['envoy/service/rate_limit_quota/v3/rlqs.proto']) as unknown as {
    envoy: { service: { rate_limit_quota: { v3: { RateLimitQuotaService: StubClass } } } };
  };
  return api.envoy.service.rate_limit_quota.v3.RateLimitQuotaService;
}

/** A bucket's usage over the last second, as the filter reports it. */
export function usage(bucket: Readonly<Record<string, string>>, allowed = 1): unknown {
  return { bucketId: { bucket }, timeElapsed: { seconds: 1 }, numRequestsAllowed: allowed };
}

/** An open stream: what it received, and the means to report and to end it. */
export class QuotaStreamClient {
  readonly answers: unknown[] = [];
  /** Resolves when the server ends the stream: with undefined, or the error it ended with. */
  private readonly ended: Promise<Error | undefined>;

  private constructor(
    private readonly stub: QuotaStub,
    private readonly stream: Duplex,
  ) {
    stream.on('data', (m: unknown) => this.answers.push(m));
    // An error is kept, not thrown: close() cancels, which grpc-js reports as one.
    this.ended = new Promise<Error | undefined>((resolve) => {
      stream.on('end', () => {
        resolve(undefined);
      });
      stream.on('error', resolve);
    });
  }

  static open(port: number, metadata = new grpc.Metadata()): QuotaStreamClient {
    const Stub = stubClass();
    const stub = new Stub(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    return new QuotaStreamClient(stub, stub.StreamRateLimitQuotas(metadata));
  }

  /** Sends one report; `domain` is left out when undefined, as after a stream's first. */
  report(domain: string | undefined, usages: readonly unknown[]): void {
    this.stream.write({ ...(domain === undefined ? {} : { domain }), bucketQuotaUsages: usages });
  }

  /** Waits until `count` answers have arrived. */
  async waitForAnswers(count: number): Promise<void> {
    await eventually(() => this.answers.length >= count, { what: `${count} RLQS answers` });
  }

  /** Half-closes and waits for the server to end the stream. */
  async end(): Promise<void> {
    this.stream.end();
    const error = await this.ended;
    this.stub.close();
    if (error !== undefined) throw error;
  }

  /** Drops the stream and the channel (in cleanups). */
  close(): void {
    this.stream.cancel();
    this.stub.close();
  }
}
