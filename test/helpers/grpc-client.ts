// A grpc-js client of RateLimitService and grpc.health.v1.Health, for tests.
import * as grpc from '@grpc/grpc-js';
import { loadApi } from '../../src/lib/proto';

type Callback<T> = (err: grpc.ServiceError | null, response?: T) => void;

interface RlsStub extends grpc.Client {
  ShouldRateLimit(
    request: unknown,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: Callback<WireResponse>,
  ): void;
}
interface HealthStub extends grpc.Client {
  Check(
    request: { service: string },
    options: grpc.CallOptions,
    callback: Callback<{ status: string }>,
  ): void;
  Watch(request: { service: string }): grpc.ClientReadableStream<{ status: string }>;
}

/** A decoded RateLimitResponse as proto-loader gives it. */
export interface WireResponse {
  overallCode?: string;
  statuses?: {
    code?: string;
    currentLimit?: { requestsPerUnit?: number; unit?: string; name?: string };
    limitRemaining?: number;
    durationUntilReset?: { seconds?: number };
  }[];
  responseHeadersToAdd?: { key: string; value: string }[];
  requestHeadersToAdd?: { key: string; value: string }[];
  dynamicMetadata?: unknown;
}

type Ctor<T> = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => T;

export class RlsClient {
  private readonly rls: RlsStub;
  private readonly health: HealthStub;

  /**
   * `options` go to both stubs; grpc-js shares one connection per target unless told not to.
   * `creds` defaults to plaintext.
   */
  constructor(
    address: string,
    options: grpc.ClientOptions = {},
    creds: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
  ) {
    const root = loadApi([
      'envoy/service/ratelimit/v3/rls.proto',
      'grpc/health/v1/health.proto',
    ]) as unknown as {
      envoy: { service: { ratelimit: { v3: { RateLimitService: Ctor<RlsStub> } } } };
      grpc: { health: { v1: { Health: Ctor<HealthStub> } } };
    };
    this.rls = new root.envoy.service.ratelimit.v3.RateLimitService(address, creds, options);
    this.health = new root.grpc.health.v1.Health(address, creds, options);
  }

  /** One call; `metadata` carries headers such as a traceparent. */
  shouldRateLimit(
    request: unknown,
    metadata: grpc.Metadata = new grpc.Metadata(),
  ): Promise<WireResponse> {
    return new Promise((resolve, reject) => {
      this.rls.ShouldRateLimit(request, metadata, { deadline: Date.now() + 10_000 }, (err, res) => {
        if (err !== null) reject(err);
        else resolve(res ?? {});
      });
    });
  }

  /** The gRPC status error of a failing call. */
  async error(request: unknown): Promise<grpc.ServiceError> {
    try {
      await this.shouldRateLimit(request);
    } catch (err: unknown) {
      return err as grpc.ServiceError;
    }
    throw new Error('the call succeeded');
  }

  healthCheck(service = ''): Promise<string> {
    return new Promise((resolve, reject) => {
      this.health.Check({ service }, { deadline: Date.now() + 5000 }, (err, res) => {
        if (err !== null) reject(err);
        else resolve(res?.status ?? 'UNKNOWN');
      });
    });
  }

  /** Streams health statuses as the server reports them. */
  watchHealth(onStatus: (status: string) => void): grpc.ClientReadableStream<{ status: string }> {
    const call = this.health.Watch({ service: '' });
    call.on('data', (message: { status: string }) => {
      onStatus(message.status);
    });
    call.on('error', () => undefined);
    return call;
  }

  close(): void {
    this.rls.close();
    this.health.close();
  }
}

/** A request from a domain and descriptors given as `[key, value]` pair lists. */
export function rlsRequest(
  domain: string,
  descriptors: (readonly (readonly [string, string])[])[],
  hitsAddend = 0,
): unknown {
  return {
    domain,
    descriptors: descriptors.map((pairs) => ({
      entries: pairs.map(([key, value]) => ({ key, value })),
    })),
    hitsAddend,
  };
}

/** Seconds until the current window of `length` seconds ends, now. */
export function resetNow(length: number): number {
  const now = Math.floor(Date.now() / 1000);
  return length - (now % length);
}
