// The ADS stream's messages and client as proto-loader gives them to the xDS client.
import type * as grpc from '@grpc/grpc-js';
import type { WireAny } from './resource';

/** A DiscoveryRequest as proto-loader encodes it. */
export interface DiscoveryRequest {
  versionInfo: string;
  node?: unknown;
  resourceNames: string[];
  typeUrl: string;
  responseNonce: string;
  errorDetail?: { code: number; message: string };
}

/** A DiscoveryResponse as proto-loader decodes it. */
export interface DiscoveryResponse {
  versionInfo?: string;
  resources?: WireAny[];
  typeUrl?: string;
  nonce?: string;
}

export type AdsCall = grpc.ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>;
/** A response waiting to be compiled, and the stream it came on. */
export interface PendingResponse {
  readonly call: AdsCall;
  readonly response: DiscoveryResponse;
}
export interface AdsClient extends grpc.Client {
  StreamAggregatedResources(metadata: grpc.Metadata): AdsCall;
}
export type AdsClientConstructor = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options: grpc.ChannelOptions,
) => AdsClient;
