// The xDS ConfigProvider: an ADS state-of-the-world stream of RateLimitConfig resources and of
// this project's QuotaRules resources.
import * as grpc from '@grpc/grpc-js';
import type { CompileOptions, ConfigError, LoadOutcome } from '../../config';
import type { XdsStatus } from '../../stats';
import { describeError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import { StateLog } from '../../lib/state-log';
import { loadApi } from '../../lib/proto';
import type { XdsSourceSettings } from '../../settings';
import { InThreadCompiler, type ConfigCompiler } from '../compile';
import type { ConfigListener, ConfigProvider } from '../provider';
import { ReconnectDelays } from './backoff';
import { channelOptions, credentials, xdsNode } from './channel';
import { SUBSCRIBED_TYPE_URLS } from './quota-rules-resource';
import type {
  AdsCall,
  AdsClient,
  AdsClientConstructor,
  DiscoveryRequest,
  DiscoveryResponse,
  PendingResponse,
} from './ads-call';
import type { WireAny } from './resource';
import { XdsStatusTracker } from './status-tracker';
import { TypeSubscriptions } from './subscriptions';
import { tlsRefusalReason } from './tls-probe';

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
  /** Told every change of the connection and every ACK and NACK sent. */
  readonly onStatus?: (status: XdsStatus) => void;
  /** Unix milliseconds, for the times of ACKs and NACKs; the system clock when absent. */
  readonly nowMs?: () => number;
}

/**
 * Subscribes to every RateLimitConfig and every QuotaRules resource (a wildcard subscription
 * of each type) over ADS. Each response holds the complete set of its type; it is compiled as
 * files are, and ACKed with its version when it compiles or NACKed with the last good version
 * and every problem when it does not, the previous snapshot serving on. Any end of the stream
 * reconnects after a backoff, and the first request of a new stream carries the last accepted
 * version.
 *
 * Responses that arrive while one compiles are coalesced: only the newest is compiled next,
 * and its ACK or NACK, carrying its nonce, answers the ones it superseded (a management server
 * such as go-control-plane ignores a request whose nonce is not the newest it sent). One that
 * finished compiling after a newer one arrived is applied if it compiled, without a request
 * of its own. Responses of a stream that has ended are dropped.
 */
export class XdsConfigProvider implements ConfigProvider {
  private readonly clientConstructor: AdsClientConstructor;
  /** Read once: a certificate file that cannot be read stops start-up, not a later retry. */
  private readonly credentials: grpc.ChannelCredentials;
  /** The channel of the current attempt; each attempt opens a fresh one (see openStream). */
  private client: AdsClient | undefined;
  private readonly metadata: grpc.Metadata;
  private readonly delays: ReconnectDelays;
  private readonly streamState: StateLog;
  private listener: ConfigListener | undefined;
  private call: AdsCall | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly types = new TypeSubscriptions(SUBSCRIBED_TYPE_URLS);
  private isStopped = false;
  private readonly compiler: ConfigCompiler;
  /**
   * Per type URL, the newest response of the current stream not yet compiled. A newer one of
   * its type replaces it, and a response of a stream that has ended is dropped, so at most one
   * per type waits while one compiles.
   */
  private readonly pending = new Map<string, PendingResponse>();
  private isApplying = false;
  private readonly status: XdsStatusTracker;
  /** The domains of the configuration last applied, for the log of an unchanged update. */
  private domains: readonly string[] = [];

  constructor(private readonly options: XdsProviderOptions) {
    this.compiler = options.compiler ?? new InThreadCompiler();
    const settings = options.settings;
    const root = loadApi(['envoy/service/discovery/v3/ads.proto']) as unknown as {
      envoy: {
        service: { discovery: { v3: { AggregatedDiscoveryService: AdsClientConstructor } } };
      };
    };
    this.clientConstructor = root.envoy.service.discovery.v3.AggregatedDiscoveryService;
    this.credentials = credentials(settings);
    this.metadata = new grpc.Metadata();
    for (const [key, value] of Object.entries(settings.additionalHeaders))
      this.metadata.add(key.toLowerCase(), value);
    this.streamState = new StateLog(options.logger);
    this.status = new XdsStatusTracker(
      settings.serverUrl,
      options.nowMs ?? Date.now,
      options.onStatus ?? (() => undefined),
    );
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

  /**
   * Each attempt gets a fresh channel, the previous one closed. A channel that failed to
   * connect keeps its own reconnect backoff (grpc-js: 1 s growing by 1.6 up to two minutes),
   * and a stream opened on it meanwhile fails at once without dialling: the attempts would
   * follow grpc-js's schedule, not this client's documented one.
   */
  private freshClient(): AdsClient {
    this.client?.close();
    const settings = this.options.settings;
    this.client = new this.clientConstructor(
      settings.serverUrl,
      this.credentials,
      channelOptions(settings),
    );
    return this.client;
  }

  private openStream(): void {
    if (this.isStopped) return;
    const call = this.freshClient().StreamAggregatedResources(this.metadata);
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
      this.status.connected(false);
      // What this stream sent and is not compiled yet will never be answered.
      this.pending.clear();
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
    const fields = {
      server: this.options.settings.serverUrl,
      status: grpc.status[status.code],
      details: status.details,
      retryInMs: Math.round(delayMs),
    };
    // A warning when the stream is lost or fails for a new reason; each retry alike is debug.
    const report = (tlsReason: string | undefined): void => {
      this.streamState.failed(
        'the xDS stream ended; reconnecting',
        `${fields.status} ${status.details}${tlsReason === undefined ? '' : ` ${tlsReason}`}`,
        tlsReason === undefined ? fields : { ...fields, tls: tlsReason },
      );
    };
    const tls = this.options.settings.tls;
    // grpc-js gives no reason for a connection the server closed after the TLS handshake (a
    // refused client certificate): one TLS connection of its own asks the server why.
    if (tls !== undefined && status.details.includes('Failed to connect'))
      void tlsRefusalReason(fields.server, tls).then(report);
    else report(undefined);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.openStream();
    }, delayMs);
    // Until the server has answered once, nothing else may keep the process alive: a service
    // waiting for its first configuration keeps retrying instead of exiting.
    if (this.delays.hasServerAnswered) this.retryTimer.unref();
  }

  private onResponse(call: AdsCall, response: DiscoveryResponse): void {
    if (this.listener === undefined) return;
    const server = this.options.settings.serverUrl;
    const hasRecovered = this.streamState.succeeded('connected to the xDS management server', {
      server,
    });
    if (!hasRecovered && !this.delays.hasServerAnswered)
      this.options.logger.info('connected to the xDS management server', { server });
    this.delays.onMessage();
    this.status.connected(true);
    const typeUrl = response.typeUrl ?? '';
    const superseded = this.pending.get(typeUrl);
    if (superseded !== undefined)
      this.options.logger.debug('an xDS update was superseded before it was compiled', {
        version: superseded.response.versionInfo ?? '',
        by: response.versionInfo ?? '',
      });
    // Deleted first so that the newest goes last in the map's order.
    this.pending.delete(typeUrl);
    this.pending.set(typeUrl, { call, response });
    if (!this.isApplying) void this.applyPending();
  }

  /**
   * Compiles the pending response, and the newest that arrived meanwhile, until none is left.
   * Compiling and the listener run after grpc-js's stream event; anything they throw refuses
   * the update.
   */
  private async applyPending(): Promise<void> {
    const listener = this.listener;
    if (listener === undefined) return;
    this.isApplying = true;
    try {
      for (let next = this.takePending(); next !== undefined; next = this.takePending()) {
        const { call, response } = next;
        await this.apply(call, listener, response).catch((err: unknown) => {
          const reason = `the update could not be applied: ${describeError(err)}`;
          this.options.logger.error('refused an xDS update (NACK)', {
            version: response.versionInfo ?? '',
            error: reason,
          });
          if (!this.isSuperseded(call, response)) this.nack(call, response, reason);
        });
      }
    } finally {
      this.isApplying = false;
    }
  }

  /** The oldest pending response, dropping those whose stream has ended. */
  private takePending(): PendingResponse | undefined {
    for (const [typeUrl, next] of this.pending) {
      this.pending.delete(typeUrl);
      if (this.call === next.call) return next;
      this.options.logger.debug('dropped an xDS update of a stream that has ended', {
        version: next.response.versionInfo ?? '',
      });
    }
    return undefined;
  }

  /** A newer response of the same type and stream waits: it answers for this one. */
  private isSuperseded(call: AdsCall, response: DiscoveryResponse): boolean {
    return this.pending.get(response.typeUrl ?? '')?.call === call;
  }

  /**
   * Compiles the resources; ACKs and hands the snapshot on, or NACKs with every problem. A
   * response superseded meanwhile gets no request of its own, and one whose stream has ended
   * is not applied: the next stream sends the whole set again.
   */
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
      const subscribed = this.types.typeUrls.join(', ');
      const reason = `unexpected type_url ${JSON.stringify(typeUrl)}; subscribed to ${subscribed}`;
      this.nack(call, response, reason);
      return;
    }
    const resources: readonly WireAny[] = response.resources ?? [];
    // The same set again under a new version (a server that bumps one version for every type)
    // has nothing to compile, only to acknowledge.
    const outcome: LoadOutcome | undefined = this.types.isUnchanged(typeUrl, resources)
      ? undefined
      : await this.compiler.compile(
          { kind: 'resources', resources: this.types.resourcesWith(typeUrl, resources) },
          this.options.compile,
        );
    if (this.isStopped) return;
    if (this.call !== call) {
      this.options.logger.debug('dropped an xDS update of a stream that has ended', { version });
      return;
    }
    const isSuperseded = this.isSuperseded(call, response);
    if (outcome !== undefined) {
      for (const warning of outcome.warnings) this.options.logger.warn(warning);
      if (!outcome.ok) {
        this.refuse(call, listener, response, outcome.errors, isSuperseded);
        return;
      }
      listener.onSnapshot(outcome.snapshot, {
        kind: 'xds',
        server: this.options.settings.serverUrl,
        version,
      });
      this.domains = outcome.snapshot.domains;
    }
    this.types.accept(typeUrl, version, resources);
    if (!isSuperseded) {
      const ack = { versionInfo: version, resourceNames: [], typeUrl, responseNonce: nonce };
      if (this.write(call, ack)) this.status.acked(version, typeUrl);
    }
    // An unchanged update keeps the configuration (and domains) it had; the log says so.
    this.options.logger.info(
      isSuperseded ? 'applied an xDS update superseded meanwhile' : 'accepted an xDS update (ACK)',
      { typeUrl, version, domains: this.domains.join(','), unchanged: outcome === undefined },
    );
  }

  /** NACKs with every problem; one superseded meanwhile is only logged, the newer answers. */
  private refuse(
    call: AdsCall,
    listener: ConfigListener,
    response: DiscoveryResponse,
    errors: readonly ConfigError[],
    isSuperseded: boolean,
  ): void {
    const version = response.versionInfo ?? '';
    const reasons = errors.map((e) => e.message).join('; ');
    if (isSuperseded) {
      this.options.logger.warn('an xDS update that was superseded meanwhile was refused', {
        version,
        error: reasons,
      });
      return;
    }
    // The listener logs the refusal's one line, with its reasons and this version.
    listener.onRejected(errors, {
      kind: 'xds',
      server: this.options.settings.serverUrl,
      version,
    });
    const typeUrl = response.typeUrl ?? '';
    this.nack(call, response, reasons);
    this.options.logger.debug('refused an xDS update (NACK)', {
      typeUrl,
      version,
      lastAccepted: this.types.lastVersion(typeUrl),
    });
  }

  /** Writes on the stream the update came on, unless it has ended since; true if written. */
  private write(call: AdsCall, request: DiscoveryRequest): boolean {
    if (this.call !== call) return false;
    call.write(request);
    return true;
  }

  /** Refuses `response`: the last accepted version of its type, and why. */
  private nack(call: AdsCall, response: DiscoveryResponse, message: string): void {
    const typeUrl = response.typeUrl ?? '';
    const isWritten = this.write(call, {
      versionInfo: this.types.lastVersion(typeUrl),
      resourceNames: [],
      typeUrl,
      responseNonce: response.nonce ?? '',
      errorDetail: { code: INVALID_ARGUMENT, message },
    });
    if (isWritten) this.status.nacked(response.versionInfo ?? '', message);
  }

  stop(): Promise<void> {
    this.isStopped = true;
    this.pending.clear();
    this.status.connected(false);
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    const call = this.call;
    this.call = undefined;
    try {
      call?.cancel();
    } catch (err: unknown) {
      this.options.logger.debug('cancelling the xDS stream failed', { error: describeError(err) });
    }
    this.client?.close();
    this.client = undefined;
    return Promise.resolve();
  }
}
