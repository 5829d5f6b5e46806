// A gRPC client of envoy.service.ratelimit.v3.RateLimitService for the command-line tools.
import type * as grpc from '@grpc/grpc-js';
import { loadApi } from '../lib/proto';
import type { WireRequest, WireResponse } from '../server';

type Callback = (err: grpc.ServiceError | null, response?: unknown) => void;

/** The generated client, with the one method the tools call. */
export type RlsClient = grpc.Client & {
  ShouldRateLimit(request: unknown, options: grpc.CallOptions, callback: Callback): void;
};
type RlsClientConstructor = new (
  address: string,
  creds: grpc.ChannelCredentials,
  options: grpc.ClientOptions,
) => RlsClient;

/** A client of the service at `dialString` (host:port); connects on the first call. */
export function connect(
  dialString: string,
  creds: grpc.ChannelCredentials,
  options: grpc.ClientOptions,
): RlsClient {
  const root = loadApi(['envoy/service/ratelimit/v3/rls.proto']) as unknown as {
    envoy: { service: { ratelimit: { v3: { RateLimitService: RlsClientConstructor } } } };
  };
  const ClientClass = root.envoy.service.ratelimit.v3.RateLimitService;
  return new ClientClass(dialString, creds, options);
}

/** One call; rejects with the grpc.ServiceError of a failed call. */
export function shouldRateLimit(
  client: RlsClient,
  request: WireRequest,
  timeoutSeconds: number,
): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    client.ShouldRateLimit(request, { deadline: Date.now() + timeoutSeconds * 1000 }, (e, res) => {
      if (e !== null) reject(e);
      else resolve(res as WireResponse);
    });
  });
}
