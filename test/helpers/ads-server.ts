// A management server speaking the upstream ADS definitions that @grpc/grpc-js-xds ships (as
// go-control-plane encodes them): tests write responses on its streams and read the requests.
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

const ROOT = path.resolve(__dirname, '..', '..');
const DEPS = path.join(ROOT, 'node_modules', '@grpc', 'grpc-js-xds', 'deps');
export const RATE_LIMIT_CONFIG_TYPE_URL =
  'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig';

/** The upstream ADS service, with go-style field names. */
function upstreamAds(): grpc.ServiceDefinition {
  const definition = protoLoader.loadSync('envoy/service/discovery/v3/ads.proto', {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: false,
    includeDirs: [
      ...['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => path.join(DEPS, d)),
      path.join(ROOT, 'node_modules', 'protobufjs'),
    ],
  });
  const root = grpc.loadPackageDefinition(definition) as unknown as {
    envoy: {
      service: {
        discovery: { v3: { AggregatedDiscoveryService: { service: grpc.ServiceDefinition } } };
      };
    };
  };
  return root.envoy.service.discovery.v3.AggregatedDiscoveryService.service;
}

/** A DiscoveryRequest as the upstream definitions decode it. */
export interface AdsRequest {
  version_info?: string;
  node?: { id?: string; user_agent_name?: string };
  resource_names?: string[];
  type_url?: string;
  response_nonce?: string;
  error_detail?: { code?: number; message?: string };
}

type Stream = grpc.ServerDuplexStream<AdsRequest, unknown>;

export class AdsServer {
  /** Every stream opened, in order, and the requests each received. */
  readonly streams: Stream[] = [];
  readonly requests: AdsRequest[][] = [];

  /**
   * The RateLimitConfig requests of stream `stream`, in order: the service subscribes to its
   * QuotaRules on the same stream, and those requests go beside them.
   */
  rateLimitRequests(stream: number): AdsRequest[] {
    return (this.requests[stream] ?? []).filter((r) => r.type_url === RATE_LIMIT_CONFIG_TYPE_URL);
  }

  private constructor(
    private readonly server: grpc.Server,
    readonly port: number,
  ) {}

  /** Listens on `port` of the loopback address; 0 (the default) lets the system pick one. */
  static async start(port = 0): Promise<AdsServer> {
    const server = new grpc.Server();
    const bound = await new Promise<number>((resolve, reject) => {
      server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => {
        if (err !== null) reject(err);
        else resolve(p);
      });
    });
    const ads = new AdsServer(server, bound);
    server.addService(upstreamAds(), {
      StreamAggregatedResources: (call: Stream) => {
        const received: AdsRequest[] = [];
        ads.streams.push(call);
        ads.requests.push(received);
        call.on('data', (r: AdsRequest) => received.push(r));
        call.on('error', () => undefined);
      },
    });
    return ads;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.tryShutdown(() => {
        resolve();
      });
    });
  }
}

/**
 * A RateLimitConfig whose one descriptor nests `depth` levels deep, encoded by field number:
 * name (1), domain (2), descriptors (3) { key (1), descriptors (4) }.
 */
export function deepRateLimitConfig(domain: string, depth: number): Uint8Array {
  let descriptor = protobuf.Writer.create()
    .uint32((1 << 3) | 2)
    .string('k')
    .finish();
  for (let i = 0; i < depth; i++) {
    descriptor = protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .string('k')
      .uint32((4 << 3) | 2)
      .bytes(descriptor)
      .finish();
  }
  return protobuf.Writer.create()
    .uint32((1 << 3) | 2)
    .string(`${domain}-config`)
    .uint32((2 << 3) | 2)
    .string(domain)
    .uint32((3 << 3) | 2)
    .bytes(descriptor)
    .finish();
}

/** A RateLimitConfig of `domain` whose one descriptor `k` allows `requestsPerUnit` a minute. */
export function oneLimitConfig(domain: string, requestsPerUnit: number): Buffer {
  const policy = protobuf.Writer.create()
    .uint32((1 << 3) | 0)
    .int32(2) // MINUTE
    .uint32((2 << 3) | 0)
    .uint32(requestsPerUnit)
    .finish();
  const descriptor = protobuf.Writer.create()
    .uint32((1 << 3) | 2)
    .string('k')
    .uint32((3 << 3) | 2)
    .bytes(policy)
    .finish();
  return Buffer.from(
    protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .string(`${domain}-config`)
      .uint32((2 << 3) | 2)
      .string(domain)
      .uint32((3 << 3) | 2)
      .bytes(descriptor)
      .finish(),
  );
}
