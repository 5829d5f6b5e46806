// The xDS ConfigProvider: an ADS state-of-the-world stream of RateLimitConfig resources and of
// this project's QuotaRules resources.
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import type { CompileOptions, LoadOutcome } from '../../config';
import { describeError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import { loadApi } from '../../lib/proto';
import { toStruct } from '../../lib/struct';
import { SERVICE_NAME, SERVICE_VERSION } from '../../lib/version';
import type { XdsSourceSettings } from '../../settings';
import { InThreadCompiler, type ConfigCompiler } from '../compile';
import type { ConfigListener, ConfigProvider } from '../provider';
import { ReconnectDelays } from './backoff';
import { SUBSCRIBED_TYPE_URLS } from './quota-rules-resource';
import type { WireAny } from './resource';
import { TypeSubscriptions } from './subscriptions';

/** A DiscoveryRequest as proto-loader encodes it. */
interface DiscoveryRequest {
  versionInfo: string;
  node?: unknown;
  resourceNames: string[];
  typeUrl: string;
  responseNonce: string;
  errorDetail?: { code: number; message: string };
}

/** A DiscoveryResponse as proto-loader decodes it. */
interface DiscoveryResponse {
  versionInfo?: string;
  resources?: WireAny[];
  typeUrl?: string;
  nonce?: string;
}

type AdsCall = grpc.ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>;
interface AdsClient extends grpc.Client {
  StreamAggregatedResources(metadata: grpc.Metadata): AdsCall;
}
type AdsClientConstructor = new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options: grpc.ChannelOptions,
) => AdsClient;

/** google.rpc.Code INVALID_ARGUMENT, the status a NACK carries. */
const INVALID_ARGUMENT = 3;

export interface XdsProviderOptions {
  readonly settings: XdsSourceSettings;
  readonly compile: CompileOptions;
  readonly logger: Logger;
  /** Uniform in [0, 1), for the backoff's randomisation; injected by tests. */
  readonly random?: () => number;
  /** Where resources are decoded and checked; on this thread when absent. */
  readonly compiler?: ConfigCompiler;
}

function credentials(settings: XdsSourceSettings): grpc.ChannelCredentials {
  const tls = settings.tls;
  if (tls === undefined) return grpc.credentials.createInsecure();
  const read = (file: string | undefined, setting: string): Buffer | null => {
    if (file === undefined) return null;
    try {
      return readFileSync(file);
    } catch (err: unknown) {
      throw new Error(`${setting}: cannot read ${file}: ${describeError(err)}`, { cause: err });
    }
  };
  return grpc.credentials.createSsl(
    read(tls.caFile, 'CONFIG_GRPC_XDS_SERVER_TLS_CACERT'),
    read(tls.keyFile, 'CONFIG_GRPC_XDS_CLIENT_TLS_KEY'),
    read(tls.certFile, 'CONFIG_GRPC_XDS_CLIENT_TLS_CERT'),
  );
}

function channelOptions(settings: XdsSourceSettings): grpc.ChannelOptions {
  const options: grpc.ChannelOptions = {};
  if (settings.maxMessageSizeBytes !== undefined)
    options['grpc.max_receive_message_length'] = settings.maxMessageSizeBytes;
  const serverName = settings.tls?.serverName;
  if (serverName !== undefined) {
    // The name the server certificate is checked against, instead of the dialled host.
    options['grpc.ssl_target_name_override'] = serverName;
    options['grpc.default_authority'] = serverName;
  }
  return options;
}

/** The xDS node this client presents: its id, metadata and user agent. */
export function xdsNode(settings: XdsSourceSettings): unknown {
  return {
    id: settings.nodeId,
    metadata: toStruct(settings.nodeMetadata),
    userAgentName: SERVICE_NAME,
    userAgentVersion: SERVICE_VERSION,
  };
}

/**
 * Subscribes to every RateLimitConfig and every QuotaRules (wildcard subscriptions) on one ADS
 * stream. Each response holds the complete set of its type; it is compiled with the other
 * type's last accepted set as files are, and ACKed with its version when it compiles or NACKed
 * with that type's last good version and every problem when it does not, the previous
 * snapshot serving on. A server that never answers QuotaRules leaves the rules out and the
 * RateLimitConfig subscription as it was. Any end of the stream reconnects after a backoff,
 * and the first requests of a new stream carry the last accepted versions.
 */
export class XdsConfigProvider implements ConfigProvider {
  private readonly client: AdsClient;
  private readonly metadata: grpc.Metadata;
  private readonly delays: ReconnectDelays;
  private listener: ConfigListener | undefined;
  private call: AdsCall | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly types = new TypeSubscriptions(SUBSCRIBED_TYPE_URLS);
  private isStopped = false;
  private readonly compiler: ConfigCompiler;
  /** Updates are compiled one after the other, each ACKed or NACKed in the order received. */
  private applying: Promise<void> = Promise.resolve();

  constructor(private readonly options: XdsProviderOptions) {
    this.compiler = options.compiler ?? new InThreadCompiler();
    const settings = options.settings;
    const root = loadApi(['envoy/service/discovery/v3/ads.proto']) as unknown as {
      envoy: {
        service: { discovery: { v3: { AggregatedDiscoveryService: AdsClientConstructor } } };
      };
    };
    this.client = new root.envoy.service.discovery.v3.AggregatedDiscoveryService(
      settings.serverUrl,
      credentials(settings),
      channelOptions(settings),
    );
    this.metadata = new grpc.Metadata();
    for (const [key, value] of Object.entries(settings.additionalHeaders))
      this.metadata.add(key.toLowerCase(), value);
    this.delays = new ReconnectDelays(
      settings.backoff,
      settings.connectRetryIntervalMs,
      options.random,
    );
  }

  start(listener: ConfigListener): Promise<void> {
    this.listener = listener;
    this.options.logger.info('connecting to the xDS management server', {
      server: this.options.settings.serverUrl,
    });
    this.openStream();
    return Promise.resolve();
  }

  private openStream(): void {
    if (this.isStopped) return;
    const call = this.client.StreamAggregatedResources(this.metadata);
    this.call = call;
    call.on('data', (response: DiscoveryResponse) => {
      if (this.call === call) this.onResponse(call, response);
    });
    call.on('error', () => {
      // The status event that follows reports and handles the end of the stream.
    });
    call.on('status', (status: grpc.StatusObject) => {
      if (this.call !== call) return;
      this.call = undefined;
      this.scheduleReconnect(status);
    });
    // The node goes with the first request only, as Envoy sends it.
    this.types.typeUrls.forEach((typeUrl, i) => {
      call.write({
        versionInfo: this.types.lastVersion(typeUrl),
        ...(i === 0 ? { node: xdsNode(this.options.settings) } : {}),
        resourceNames: [],
        typeUrl,
        responseNonce: '',
      });
    });
  }

  private scheduleReconnect(status: grpc.StatusObject): void {
    if (this.isStopped) return;
    const delayMs = this.delays.next();
    this.options.logger.warn('the xDS stream ended; reconnecting', {
      server: this.options.settings.serverUrl,
      status: grpc.status[status.code],
      details: status.details,
      retryInMs: Math.round(delayMs),
    });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.openStream();
    }, delayMs);
    this.retryTimer.unref();
  }

  private onResponse(call: AdsCall, response: DiscoveryResponse): void {
    const listener = this.listener;
    if (listener === undefined) return;
    if (!this.delays.hasServerAnswered)
      this.options.logger.info('connected to the xDS management server');
    this.delays.onMessage();
    const version = response.versionInfo ?? '';
    const nonce = response.nonce ?? '';
    // Compiling and the listener run after grpc-js's stream event, one update at a time, so
    // that updates are answered in the order they came; anything they throw refuses the update.
    this.applying = this.applying.then(() =>
      this.apply(call, listener, response).catch((err: unknown) => {
        const reason = `the update could not be applied: ${describeError(err)}`;
        this.options.logger.error('refused an xDS update (NACK)', { version, error: reason });
        this.nack(call, nonce, reason, response.typeUrl ?? '');
      }),
    );
  }

  /** Compiles the resources; ACKs and hands the snapshot on, or NACKs with every problem. */
  private async apply(
    call: AdsCall,
    listener: ConfigListener,
    response: DiscoveryResponse,
  ): Promise<void> {
    const version = response.versionInfo ?? '';
    const nonce = response.nonce ?? '';
    const typeUrl = response.typeUrl ?? '';
    if (!this.types.isSubscribed(typeUrl)) {
      // ADS may carry other types; a response of one we did not ask for is refused.
      this.nack(
        call,
        nonce,
        `unexpected type_url ${JSON.stringify(typeUrl)}; subscribed to ${this.types.typeUrls.join(', ')}`,
        typeUrl,
      );
      return;
    }
    const resources: readonly WireAny[] = response.resources ?? [];
    if (this.types.isUnchanged(typeUrl, resources)) {
      // The same set again under a new version: nothing to compile, only to acknowledge.
      this.acknowledge(call, typeUrl, version, nonce, resources);
      return;
    }
    const outcome: LoadOutcome = await this.compiler.compile(
      { kind: 'resources', resources: this.types.resourcesWith(typeUrl, resources) },
      this.options.compile,
    );
    if (this.isStopped) return;
    for (const warning of outcome.warnings) this.options.logger.warn(warning);
    if (!outcome.ok) {
      listener.onRejected(outcome.errors);
      this.nack(call, nonce, outcome.errors.map((e) => e.message).join('; '), typeUrl);
      this.options.logger.warn('refused an xDS update (NACK)', {
        typeUrl,
        version,
        lastAccepted: this.types.lastVersion(typeUrl),
      });
      return;
    }
    listener.onSnapshot(outcome.snapshot, {
      kind: 'xds',
      server: this.options.settings.serverUrl,
      version,
    });
    this.acknowledge(call, typeUrl, version, nonce, resources);
    this.options.logger.info('accepted an xDS update (ACK)', {
      typeUrl,
      version,
      domains: outcome.snapshot.domains.join(','),
    });
  }

  private acknowledge(
    call: AdsCall,
    typeUrl: string,
    version: string,
    nonce: string,
    resources: readonly WireAny[],
  ): void {
    this.types.accept(typeUrl, version, resources);
    this.write(call, { versionInfo: version, resourceNames: [], typeUrl, responseNonce: nonce });
  }

  /** Writes on the stream the update came on, unless it has ended since. */
  private write(call: AdsCall, request: DiscoveryRequest): void {
    if (this.call === call) call.write(request);
  }

  private nack(call: AdsCall, nonce: string, message: string, typeUrl: string): void {
    this.write(call, {
      versionInfo: this.types.lastVersion(typeUrl),
      resourceNames: [],
      typeUrl,
      responseNonce: nonce,
      errorDetail: { code: INVALID_ARGUMENT, message },
    });
  }

  stop(): Promise<void> {
    this.isStopped = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    const call = this.call;
    this.call = undefined;
    try {
      call?.cancel();
    } catch (err: unknown) {
      this.options.logger.debug('cancelling the xDS stream failed', { error: describeError(err) });
    }
    this.client.close();
    return Promise.resolve();
  }
}
