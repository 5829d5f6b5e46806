// The management server: ADS (and RateLimitConfigDiscoveryService) state of the world, per node:
// RateLimitConfig resources, and this project's QuotaRules beside them on the same ADS stream.
import * as grpc from '@grpc/grpc-js';
import type { Resource } from './config-files';
import { loadServices, QUOTA_TYPE_URL, TYPE_URL } from './proto';

interface DiscoveryRequest {
  versionInfo?: string;
  node?: {
    id?: string;
    userAgentName?: string;
    userAgentVersion?: string;
    metadata?: { fields?: Record<string, { stringValue?: string }> };
  };
  typeUrl?: string;
  responseNonce?: string;
  errorDetail?: { code?: number; message?: string };
}

interface DiscoveryResponse {
  versionInfo: string;
  // protobufjs's bundled Any keeps the proto field name.
  resources: { type_url: string; value: Uint8Array }[];
  typeUrl: string;
  nonce: string;
  controlPlane: { identifier: string };
}

type Stream = grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>;

/** One version the simulator published, for the admin page. */
export interface PublishedVersion {
  readonly version: string;
  readonly at: string;
  readonly resources: readonly string[];
}

/** How many published versions the admin API remembers. */
const VERSION_HISTORY = 20;

/** What the simulator knows of one node, for the admin API. */
export interface NodeStatus {
  connectedStreams: number;
  lastSentVersion: string | undefined;
  lastAckVersion: string | undefined;
  /** When the last ACK arrived (ISO 8601). */
  lastAckAt: string | undefined;
  lastNack: { version: string | undefined; message: string; at: string } | undefined;
  requests: number;
  userAgent: string | undefined;
  /** Metadata of the node's latest stream, as the client sent it. */
  headers: Record<string, string>;
  /** The node's own metadata (string values). */
  metadata: Record<string, string>;
}

export interface Logger {
  (message: string): void;
}

interface StreamState {
  readonly call: Stream;
  nodeId: string | undefined;
  nonce: number;
  /** The types the stream subscribed to, each with the nonce last sent for it. */
  readonly types: Map<string, string | undefined>;
  /** The version each type last ACKed: a node has ACKed a version once every type has. */
  readonly acked: Map<string, string | undefined>;
}

/** The types served; a request for another is logged and left unanswered, as go-control-plane does. */
const SERVED_TYPES: readonly string[] = [TYPE_URL, QUOTA_TYPE_URL];

/**
 * Serves one set of resources, versioned by a counter bumped on every change, to every
 * subscriber. A NACK is logged and recorded; the node keeps its state and nothing is resent
 * until the next change.
 */
export class ManagementServer {
  readonly server = new grpc.Server();
  private readonly streams = new Set<StreamState>();
  private readonly nodes = new Map<string, NodeStatus>();
  private resources: readonly Resource[] = [];
  private versionNumber = 0;
  private readonly epoch = Date.now().toString(36);
  private readonly published: PublishedVersion[] = [];

  constructor(
    private readonly log: Logger,
    private readonly identifier = 'ratelimit-control-plane-sim',
  ) {
    const services = loadServices();
    const handler = (call: Stream): void => {
      this.onStream(call);
    };
    this.server.addService(services.ads, { StreamAggregatedResources: handler });
    this.server.addService(services.rlsConfig, {
      StreamRlsConfigs: handler,
      FetchRlsConfigs: (
        _call: grpc.ServerUnaryCall<DiscoveryRequest, DiscoveryResponse>,
        callback: grpc.sendUnaryData<DiscoveryResponse>,
      ) => {
        callback(null, this.response(TYPE_URL, 'fetch'));
      },
    });
  }

  /**
   * Versions carry this run's start time, so a client that reconnects after a restart with a
   * version of the previous run is never mistaken for one that is up to date.
   */
  get version(): string {
    return `${this.versionNumber}-${this.epoch}`;
  }

  get resourceNames(): string[] {
    return this.resources.map((r) => r.name);
  }

  /** Replaces the whole set with a new version and pushes it to every stream. */
  setResources(resources: readonly Resource[]): void {
    this.resources = resources;
    this.versionNumber += 1;
    this.published.unshift({
      version: this.version,
      at: new Date().toISOString(),
      resources: this.resourceNames,
    });
    this.published.length = Math.min(this.published.length, VERSION_HISTORY);
    this.log(`version ${this.version}: ${this.resourceNames.join(', ') || '(no resources)'}`);
    for (const stream of this.streams)
      for (const type of stream.types.keys()) this.send(stream, type);
  }

  /** Ends every stream with UNAVAILABLE, as a management server restart would. */
  disconnectAll(): number {
    const count = this.streams.size;
    for (const stream of [...this.streams]) {
      // An error status ends the stream for the client, as a server going away does.
      stream.call.emit('error', {
        code: grpc.status.UNAVAILABLE,
        details: 'disconnected by the simulator',
      });
    }
    return count;
  }

  status(): {
    version: string;
    resources: string[];
    versions: readonly PublishedVersion[];
    nodes: Record<string, NodeStatus>;
  } {
    return {
      version: this.version,
      resources: this.resourceNames,
      versions: [...this.published],
      nodes: Object.fromEntries(this.nodes),
    };
  }

  private node(id: string): NodeStatus {
    let node = this.nodes.get(id);
    if (node === undefined) {
      node = {
        connectedStreams: 0,
        lastSentVersion: undefined,
        lastAckVersion: undefined,
        lastAckAt: undefined,
        lastNack: undefined,
        requests: 0,
        userAgent: undefined,
        headers: {},
        metadata: {},
      };
      this.nodes.set(id, node);
    }
    return node;
  }

  private response(typeUrl: string, nonce: string): DiscoveryResponse {
    const resources: DiscoveryResponse['resources'] = [];
    for (const r of this.resources) {
      if (typeUrl === TYPE_URL) resources.push({ type_url: r.typeUrl, value: r.value });
      else if (r.quota !== undefined) resources.push({ type_url: QUOTA_TYPE_URL, value: r.quota });
    }
    return {
      versionInfo: this.version,
      resources,
      typeUrl,
      nonce,
      controlPlane: { identifier: this.identifier },
    };
  }

  private send(stream: StreamState, typeUrl: string): void {
    if (stream.nodeId === undefined) return;
    stream.nonce += 1;
    const nonce = String(stream.nonce);
    stream.types.set(typeUrl, nonce);
    this.node(stream.nodeId).lastSentVersion = this.version;
    stream.call.write(this.response(typeUrl, nonce));
  }

  private onStream(call: Stream): void {
    const state: StreamState = {
      call,
      nodeId: undefined,
      nonce: 0,
      types: new Map(),
      acked: new Map(),
    };
    this.streams.add(state);
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(call.metadata.getMap())) headers[key] = String(value);
    const close = (): void => {
      if (!this.streams.delete(state)) return;
      if (state.nodeId !== undefined) this.node(state.nodeId).connectedStreams -= 1;
    };
    call.on('end', () => {
      close();
      call.end();
    });
    call.on('error', close);
    call.on('close', close);
    call.on('data', (request: DiscoveryRequest) => {
      this.onRequest(state, request, headers);
    });
  }

  private onRequest(
    state: StreamState,
    request: DiscoveryRequest,
    headers: Record<string, string>,
  ): void {
    // StreamRlsConfigs' requests may leave the type out: it serves RateLimitConfig alone.
    const typeUrl =
      request.typeUrl === undefined || request.typeUrl === '' ? TYPE_URL : request.typeUrl;
    if (!SERVED_TYPES.includes(typeUrl)) {
      this.log(`ignoring a request for ${typeUrl}`);
      return;
    }
    if (state.nodeId === undefined) {
      // The node travels in the first request of a stream.
      const id = request.node?.id ?? '';
      state.nodeId = id;
      const node = this.node(id);
      node.connectedStreams += 1;
      node.headers = headers;
      node.metadata = Object.fromEntries(
        Object.entries(request.node?.metadata?.fields ?? {}).map(([k, v]) => [
          k,
          v.stringValue ?? '',
        ]),
      );

      node.userAgent =
        request.node?.userAgentName === undefined
          ? undefined
          : `${request.node.userAgentName}/${request.node.userAgentVersion ?? ''}`;
      this.log(
        `node ${JSON.stringify(id)} connected with version ${JSON.stringify(request.versionInfo ?? '')}`,
      );
    }
    const node = this.node(state.nodeId);
    node.requests += 1;
    if (!state.types.has(typeUrl)) {
      state.types.set(typeUrl, undefined);
      // A client that already holds the current version needs nothing until the next change.
      if ((request.versionInfo ?? '') !== this.version || this.versionNumber === 0)
        this.send(state, typeUrl);
      return;
    }
    if (request.responseNonce !== state.types.get(typeUrl)) return;
    if (request.errorDetail !== undefined) {
      const message = request.errorDetail.message ?? '';
      node.lastNack = { version: node.lastSentVersion, message, at: new Date().toISOString() };
      this.log(
        `node ${JSON.stringify(state.nodeId)} NACKed version ${node.lastSentVersion ?? ''}: ${message}`,
      );
      return;
    }
    state.acked.set(typeUrl, request.versionInfo);
    if ([...state.types.keys()].some((type) => state.acked.get(type) !== request.versionInfo))
      return;
    node.lastAckVersion = request.versionInfo;
    node.lastAckAt = new Date().toISOString();
    this.log(`node ${JSON.stringify(state.nodeId)} ACKed version ${request.versionInfo ?? ''}`);
  }

  /** Binds the gRPC listener; resolves with the port. */
  listen(address: string, credentials: grpc.ServerCredentials): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.bindAsync(address, credentials, (err, port) => {
        if (err !== null) reject(err);
        else resolve(port);
      });
    });
  }

  shutdown(): Promise<void> {
    this.disconnectAll();
    return new Promise((resolve) => {
      this.server.tryShutdown(() => {
        resolve();
      });
    });
  }
}
