// The RLQS messages as plain objects (proto-loader's form: camelCase, 64-bit numbers as numbers,
// oneofs named) and two ways to carry them for the Envoy-like client of rlqs-envoy.ts: a gRPC
// stream to a service process (grpc-js), and a quota service in this process on its clock,
// through the same protobuf bytes and decoder the gRPC method uses.
import * as grpc from '@grpc/grpc-js';
import { loadApi, messageType } from '../../src/lib/proto';
import {
  encodeResponse,
  RLQS_PROTO,
  type QuotaService,
  type QuotaStatus,
  type QuotaStreamSink,
} from '../../src/quota';
import { BucketIdCache, decodeUsageReports } from '../../src/server/wire/rlqs-reports';

/** envoy.type.v3.RateLimitStrategy. */
export interface WireStrategy {
  readonly blanketRule?: 'ALLOW_ALL' | 'DENY_ALL';
  readonly requestsPerTimeUnit?: {
    readonly requestsPerTimeUnit?: number;
    readonly timeUnit?: string;
  };
  readonly tokenBucket?: {
    readonly maxTokens?: number;
    readonly tokensPerFill?: { readonly value?: number };
    readonly fillInterval?: { readonly seconds?: number; readonly nanos?: number };
  };
}

/** RateLimitQuotaUsageReports. */
export interface WireReports {
  readonly domain?: string;
  readonly bucketQuotaUsages?: readonly {
    readonly bucketId?: { readonly bucket?: Readonly<Record<string, string>> };
    readonly timeElapsed?: { readonly seconds?: number; readonly nanos?: number };
    readonly numRequestsAllowed?: number;
    readonly numRequestsDenied?: number;
  }[];
}

/** RateLimitQuotaResponse. */
export interface WireResponse {
  readonly bucketAction?: readonly {
    readonly bucketId?: { readonly bucket?: Readonly<Record<string, string>> };
    readonly quotaAssignmentAction?: {
      readonly assignmentTimeToLive?: { readonly seconds?: number; readonly nanos?: number };
      readonly rateLimitStrategy?: WireStrategy;
    };
    readonly abandonAction?: Record<string, never>;
  }[];
}

/** One open stream. */
export interface RlqsCall {
  send(reports: WireReports): void;
  cancel(): void;
}

/** What the stream tells its opener; onClose at most once, with a gRPC status code. */
export interface RlqsHandlers {
  onMessage(response: WireResponse): void;
  onClose(code: number, details: string): void;
}

/** Opens StreamRateLimitQuotas streams to one place. */
export interface RlqsTransport {
  open(handlers: RlqsHandlers): RlqsCall;
}

type Duplex = grpc.ClientDuplexStream<WireReports, WireResponse>;
type Stub = grpc.Client & { StreamRateLimitQuotas(): Duplex };
type StubClass = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options: grpc.ClientOptions,
) => Stub;

let stubClass: StubClass | undefined;

/**
 * StreamRateLimitQuotas over grpc-js to the replicas at `ports()` (asked at each open, so a test
 * may move an Envoy), each client on a channel of its own, as separate Envoys are.
 */
export class GrpcRlqsTransport implements RlqsTransport {
  private stub: Stub | undefined;
  private stubPort: number | undefined;
  /** Ports of the streams opened, in order. */
  readonly opened: number[] = [];

  constructor(private readonly port: () => number) {}

  open(handlers: RlqsHandlers): RlqsCall {
    const port = this.port();
    if (this.stub === undefined || this.stubPort !== port) {
      this.stub?.close();
      stubClass ??= (
        loadApi([RLQS_PROTO]) as unknown as {
          envoy: { service: { rate_limit_quota: { v3: { RateLimitQuotaService: StubClass } } } };
        }
      ).envoy.service.rate_limit_quota.v3.RateLimitQuotaService;
      this.stub = new stubClass(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
        'grpc.use_local_subchannel_pool': 1,
      });
      this.stubPort = port;
    }
    this.opened.push(port);
    const call = this.stub.StreamRateLimitQuotas();
    let isClosed = false;
    const close = (code: number, details: string): void => {
      if (isClosed) return;
      isClosed = true;
      handlers.onClose(code, details);
    };
    call.on('data', (m: WireResponse) => {
      handlers.onMessage(m);
    });
    call.on('error', (err: grpc.ServiceError) => {
      close(err.code, err.details);
    });
    call.on('status', (s: grpc.StatusObject) => {
      close(s.code, s.details);
    });
    return {
      send: (reports) => {
        if (!isClosed) call.write(reports);
      },
      cancel: () => {
        isClosed = true;
        call.cancel();
      },
    };
  }

  close(): void {
    this.stub?.close();
  }
}

const CODES: Readonly<Record<QuotaStatus, number>> = {
  OK: grpc.status.OK,
  INVALID_ARGUMENT: grpc.status.INVALID_ARGUMENT,
  RESOURCE_EXHAUSTED: grpc.status.RESOURCE_EXHAUSTED,
  UNAVAILABLE: grpc.status.UNAVAILABLE,
  INTERNAL: grpc.status.INTERNAL,
};

const PACKAGE = 'envoy.service.rate_limit_quota.v3';

/**
 * A quota service of this process, driven by its own (manual) clock: each report is encoded as
 * Envoy would send it and read by the gRPC method's decoder; each response is the bytes the
 * method would write, decoded as proto-loader decodes them.
 */
export class InProcessRlqsTransport implements RlqsTransport {
  /**
   * `service()` is asked at each open: a test may replace the service (a restart). `peer` is
   * the address:port the service sees: Envoys on separate hosts have separate addresses.
   */
  constructor(
    private readonly service: () => QuotaService,
    private readonly peer = 'in-process',
  ) {}

  open(handlers: RlqsHandlers): RlqsCall {
    const reportsType = messageType(RLQS_PROTO, `${PACKAGE}.RateLimitQuotaUsageReports`);
    const responseType = messageType(RLQS_PROTO, `${PACKAGE}.RateLimitQuotaResponse`);
    const sink: QuotaStreamSink = {
      send: (actions) => {
        const bytes = encodeResponse(actions);
        const decoded = responseType.toObject(responseType.decode(bytes), {
          longs: Number,
          enums: String,
          defaults: false,
          oneofs: true,
        }) as WireResponse;
        handlers.onMessage(decoded);
      },
      end: (status, message) => {
        handlers.onClose(CODES[status], message);
      },
      canSend: () => true,
    };
    const service = this.service();
    const stream = service.openStream(sink, this.peer);
    // As the gRPC method decodes: through a bucket id cache bounded as the service's settings say.
    const ids = new BucketIdCache(1000, service.limits.maxBucketIdBytes, stream);
    return {
      send: (reports) => {
        const bytes = Buffer.from(reportsType.encode(reportsType.fromObject(reports)).finish());
        stream.receive(decodeUsageReports(bytes, 0, bytes.length, ids));
      },
      cancel: () => {
        stream.closed();
        ids.clear();
      },
    };
  }
}
