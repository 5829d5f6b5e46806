// One Redis instance (the main one or the per-second one): its client, batcher and connection state.
import type { Cluster } from 'ioredis';
import { systemClock, type Clock } from '../../lib/clock';
import { describeError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import { maskCredentialsInUrl } from '../../lib/mask';
import type { RedisInstanceSettings } from '../../settings';
import type { Counter, Gauge } from '../../stats';
import type {
  CounterIncrement,
  SlidingWindowChange,
  SlidingWindowCounts,
  TokenBucketChange,
  TokenBucketState,
} from '../counter-store';
import { SlidingWindowOp, TokenBucketOp } from './algorithm-ops';
import { connectionFailure } from '../connection-words';
import { StoreError } from '../errors';
import type { FailureLog } from '../failure-log';
import { defaultAwsIdentity, type AwsIdentity } from './aws-identity';
import { PipelineBatcher, type Batcher } from './batcher';
import { ClusterBatcher } from './cluster-batcher';
import { sendCommand, type CounterClient, type CounterCommand } from './commands';
import {
  connectWithBackoff,
  createInstanceClient,
  describeInstance,
  setReconnecting,
  type InstanceClient,
  type StartupBackoff,
} from './connection';
import { credentialSource, keepCredentialsFresh, type CredentialSource } from './credentials';
import { IamTokenProvider } from './iam-token';
import { describeFailure } from './failures';
import { IncrementOp, ReadOp, toStoreError } from './ops';
import { TlsFileError } from './tls';

/** The reference's redis_pool statistics of one instance. */
export interface PoolStats {
  readonly active: Gauge;
  readonly total: Counter;
  readonly closed: Counter;
}

/** What opening an instance needs besides its settings. */
export interface InstanceDeps {
  readonly logger: Logger;
  readonly startup: StartupBackoff;
  readonly pool: PoolStats | undefined;
  /** Called whenever the instance connects or loses its connection. */
  readonly onChange: () => void;
  /** Where the instance's outages and failed calls are told, a few lines per outage. */
  readonly failures: FailureLog;
  /** Signs IAM tokens; the AWS SDK's default chain when absent. */
  readonly awsIdentity?: AwsIdentity | undefined;
  readonly clock?: Clock | undefined;
}

async function iamProvider(
  instance: RedisInstanceSettings,
  deps: InstanceDeps,
): Promise<IamTokenProvider | undefined> {
  const iam = instance.iam;
  if (iam === undefined) return undefined;
  const identity = deps.awsIdentity ?? defaultAwsIdentity();
  let region = iam.region;
  if (region === undefined) {
    try {
      region = await identity.region();
    } catch (err: unknown) {
      throw new StoreError(
        'redis',
        `${instance.settingPrefix}AWS_IAM_REGION is empty and the AWS SDK found no region (AWS_REGION, the shared config file): ${describeError(err)}`,
        false,
        { cause: err },
      );
    }
  }
  return new IamTokenProvider({
    iam,
    region,
    credentials: identity.credentials,
    clock: deps.clock ?? systemClock,
  });
}

function createHandle(instance: RedisInstanceSettings): InstanceClient {
  try {
    return createInstanceClient(instance);
  } catch (err: unknown) {
    // A TLS file that cannot be used will not get better by retrying.
    if (err instanceof TlsFileError) throw new StoreError('redis', err.message, false);
    throw err;
  }
}

export class Instance {
  readonly batcher: Batcher;
  /** Where the instance is, for operators: its URL with credentials masked. */
  readonly address: string;
  private isReady = false;
  /** Set by close(): the connection's end is then asked for, not an outage. */
  private isClosing = false;
  private stopRefreshing: () => void = () => undefined;
  /** Why the last connection attempt failed, in words; cleared once connected. */
  private connectionCause: string | undefined;
  private readonly failures: FailureLog;

  private constructor(
    readonly settings: RedisInstanceSettings,
    private readonly handle: InstanceClient,
    deps: InstanceDeps,
  ) {
    const { client } = handle;
    this.address = maskCredentialsInUrl(settings.url);
    this.failures = deps.failures;
    this.batcher = handle.isCluster
      ? new ClusterBatcher(
          client as CounterClient & Cluster,
          settings.pipelineWindowMs,
          settings.timeoutMs,
        )
      : new PipelineBatcher(client as Exclude<CounterClient, Cluster>, settings.pipelineWindowMs);
    for (const event of ['error', 'node error']) {
      client.on(event, (err: Error) => {
        this.connectionFailed(err, deps.logger);
      });
    }
    client.on('ready', () => {
      this.isReady = true;
      this.connectionCause = undefined;
      this.failures.up(this.address);
      deps.pool?.total.inc();
      deps.pool?.active.set(1);
      deps.onChange();
    });
    for (const event of ['close', 'end']) {
      client.on(event, () => {
        if (!this.isReady) return;
        this.isReady = false;
        if (!this.isClosing)
          this.failures.down(this.address, this.connectionCause ?? 'connection closed');
        deps.pool?.closed.inc();
        deps.pool?.active.set(0);
        deps.onChange();
      });
    }
  }

  /** Keeps the newest reason the connection fails, for the outage's lines and callers' errors. */
  private connectionFailed(err: Error, logger: Logger): void {
    this.connectionCause = connectionFailure(err);
    if (this.failures.isDown(this.address)) this.failures.down(this.address, this.connectionCause);
    logger.debug('redis client error', {
      target: describeInstance(this.settings),
      error: err.message,
    });
  }

  /** Hands `reject` a failed call's error in an operator's words, and counts it. */
  private rejecting(reject: (err: StoreError) => void): (err: StoreError) => void {
    return (err) => {
      const described = describeFailure(err, {
        address: this.address,
        isConnected: this.isConnected,
        isSingleConnection: !this.handle.isCluster,
        connectionCause: this.connectionCause ?? this.failures.causeOf(this.address),
        timeoutMs: this.settings.timeoutMs,
      });
      this.failures.requestFailed(described);
      reject(described);
    };
  }

  /**
   * Creates the client and opens its first connection as REDIS_STARTUP_* says. Rejects with a
   * StoreError naming the setting to change when it gives up.
   */
  static async open(settings: RedisInstanceSettings, deps: InstanceDeps): Promise<Instance> {
    const iam = await iamProvider(settings, deps);
    const handle = createHandle(settings);
    const instance = new Instance(settings, handle, deps);
    const source: CredentialSource | undefined = credentialSource(settings.auth, iam);
    if (source !== undefined) {
      instance.stopRefreshing = keepCredentialsFresh(
        handle.client,
        () => handle.credentialTargets(),
        source,
        deps.logger,
        describeInstance(settings),
      );
    }
    deps.logger.info('connecting to redis', {
      target: describeInstance(settings),
      perSecond: settings.settingPrefix === 'REDIS_PERSECOND_',
    });
    try {
      await connectWithBackoff(handle, settings, source, deps.startup, deps.logger);
    } catch (err: unknown) {
      instance.stopRefreshing();
      handle.client.disconnect();
      throw toStoreError(err);
    }
    deps.logger.info('connected to redis', { target: describeInstance(settings) });
    return instance;
  }

  get isConnected(): boolean {
    // The status, not the 'ready' event: a cluster announces it a tick after connect() resolves.
    return this.handle.client.status === 'ready';
  }

  increment(items: readonly CounterIncrement[]): Promise<number[]> {
    return new Promise((resolve, reject) => {
      this.batcher.submit(new IncrementOp(items, resolve, this.rejecting(reject)));
    });
  }

  slidingWindow(items: readonly SlidingWindowChange[]): Promise<SlidingWindowCounts[]> {
    return new Promise((resolve, reject) => {
      this.batcher.submit(new SlidingWindowOp(items, resolve, this.rejecting(reject)));
    });
  }

  tokenBucket(items: readonly TokenBucketChange[]): Promise<TokenBucketState[]> {
    const client = this.handle.client;
    const sendAlone = (command: CounterCommand): Promise<unknown> => sendCommand(client, command);
    return new Promise((resolve, reject) => {
      this.batcher.submit(new TokenBucketOp(items, resolve, this.rejecting(reject), sendAlone));
    });
  }

  read(keys: readonly string[]): Promise<number[]> {
    return new Promise((resolve, reject) => {
      this.batcher.submit(new ReadOp(keys, resolve, this.rejecting(reject)));
    });
  }

  /** Finishes in-flight work, then closes the connections for good. */
  async close(): Promise<void> {
    this.isClosing = true;
    await this.batcher.drain();
    this.stopRefreshing();
    const client = this.handle.client;
    setReconnecting(client, false);
    try {
      await client.quit();
    } catch {
      // Closed already or unreachable: disconnect() below ends it either way.
    }
    // QUIT leaves a sentinel client's failover-detector subscriptions open; this ends them.
    client.disconnect();
  }
}
