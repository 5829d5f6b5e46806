// The composition root: the only place that wires implementations together.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConfigError, ConfigSnapshot } from './config';
import { OverLimitCache, RateLimitEngine, reportLocalCache } from './engine';
import { systemClock, type Clock } from './lib/clock';
import { describeError } from './lib/errors';
import { announceReady, serveMetrics, Supervisor, workerIndex } from './cluster';
import { createLogger, type Logger } from './lib/logger';
import {
  FileConfigProvider,
  XdsConfigProvider,
  type ConfigListener,
  type ConfigProvider,
} from './provider';
import {
  createDebugServer,
  createHttpHandler,
  createMetricsServer,
  HealthState,
  RateLimitGrpcServer,
} from './server';
import { loadSettings, SettingsError, type Environment, type Settings } from './settings';
import {
  defaultMapping,
  DogStatsdSink,
  MetricMapper,
  PrometheusSink,
  STAT,
  StatsdSink,
  StatsFlusher,
  StatsStore,
  StdoutSink,
  type StatsSink,
} from './stats';
import {
  MemcachedCounterStore,
  MemoryCounterStore,
  RedisCounterStore,
  type CounterStore,
} from './store';

/** How long in-flight calls may take to finish after SIGTERM before they are cut. */
const DRAIN_TIMEOUT_MS = 15_000;

/** A running service; tests and the command line hold one. */
export interface RunningService {
  readonly settings: Settings;
  readonly ports: {
    readonly http: number;
    readonly grpc: number;
    /** Unbound in workers other than the first (WORKERS above 1). */
    readonly debug: number | undefined;
    /** The Prometheus listener, when USE_PROMETHEUS is on. */
    readonly metrics: number | undefined;
  };
  readonly engine: RateLimitEngine;
  readonly stats: StatsStore;
  readonly health: HealthState;
  /** Health turns unhealthy, listeners stop, in-flight calls finish, backends close. */
  stop(): Promise<void>;
}

export interface StartOptions {
  readonly env?: Environment;
  readonly clock?: Clock;
  readonly logger?: Logger;
  readonly statsSink?: StatsSink;
  /** A configuration source to use instead of the one the settings choose (tests). */
  readonly provider?: ConfigProvider;
  /** Set when a supervisor forked this process as one of WORKERS. */
  readonly worker?: { readonly index: number };
}

async function openStore(
  settings: Settings,
  clock: Clock,
  logger: Logger,
  stats: StatsStore,
): Promise<CounterStore> {
  const backend = settings.backend;
  switch (backend.type) {
    case 'memory':
      return new MemoryCounterStore({ clock });
    case 'redis':
      for (const instance of [backend.main, backend.perSecond]) {
        if (instance !== undefined && instance.poolSize !== 10) {
          logger.info(
            `${instance.settingPrefix}POOL_SIZE has no effect: one pipelined connection per instance serves all requests`,
          );
        }
      }
      return RedisCounterStore.open(backend, logger, stats);
    case 'memcache':
      return MemcachedCounterStore.open(backend, { logger, stats });
  }
}

function createProvider(settings: Settings, stats: StatsStore, logger: Logger): ConfigProvider {
  const compile = {
    stats,
    mergeDomainConfig: settings.config.mergeDomainConfig,
    sanitizeDots: settings.stats.sanitizeDescriptorMetricDots,
  };
  const source = settings.config.source;
  switch (source.type) {
    case 'FILE':
      return new FileConfigProvider({
        settings: source,
        compile,
        logger,
        loaderStats: {
          loadAttempts: stats.counter(STAT.runtimeLoadAttempts),
          loadFailures: stats.counter(STAT.runtimeLoadFailures),
          numValues: stats.gauge(STAT.runtimeNumValues),
        },
      });
    case 'GRPC_XDS_SOTW':
      return new XdsConfigProvider({ settings: source, compile, logger });
  }
}

/** The sinks of the settings; the Prometheus one is returned apart too, for its listener. */
function createSinks(
  settings: Settings,
  stats: StatsStore,
  logger: Logger,
): {
  sinks: StatsSink[];
  prometheus: { sink: PrometheusSink; host: string; port: number; path: string } | undefined;
} {
  const extraTags = settings.stats.extraTags;
  const onError = (err: Error): void => {
    logger.debug('statsd send failed', { error: err.message });
  };
  const sinks: StatsSink[] = [];
  let prometheus: { sink: PrometheusSink; host: string; port: number; path: string } | undefined;
  for (const sink of settings.stats.sinks) {
    switch (sink.type) {
      case 'stdout':
        sinks.push(new StdoutSink(process.stdout, extraTags));
        break;
      case 'statsd':
        sinks.push(
          new StatsdSink({
            host: sink.host,
            port: sink.port,
            protocol: sink.protocol,
            extraTags,
            onError,
          }),
        );
        break;
      case 'dogstatsd':
        sinks.push(
          new DogStatsdSink({
            host: sink.host,
            port: sink.port,
            protocol: sink.protocol,
            extraTags,
            mogrifiers: sink.mogrifiers,
            onError,
          }),
        );
        break;
      case 'prometheus': {
        const mapper = loadMapper(sink.mapperYaml, sink.responseTimeAsMilliseconds);
        const promSink = new PrometheusSink({ mapper, store: stats, extraTags, logger });
        sinks.push(promSink);
        prometheus = { sink: promSink, host: sink.host, port: sink.port, path: sink.path };
        break;
      }
    }
  }
  return { sinks, prometheus };
}

/** The mapping file, or the built-in mapping; a bad file stops start-up naming the setting. */
function loadMapper(file: string | undefined, responseTimeAsMilliseconds: boolean): MetricMapper {
  if (file === undefined)
    return MetricMapper.fromYaml(
      defaultMapping(responseTimeAsMilliseconds),
      'the built-in mapping',
    );
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err: unknown) {
    throw new SettingsError([
      { setting: 'PROMETHEUS_MAPPER_YAML', message: `cannot read ${file}: ${describeError(err)}` },
    ]);
  }
  try {
    return MetricMapper.fromYaml(text, file);
  } catch (err: unknown) {
    throw new SettingsError([{ setting: 'PROMETHEUS_MAPPER_YAML', message: describeError(err) }]);
  }
}

function listenHttp(
  server: http.Server,
  host: string,
  port: number,
  what: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => {
      reject(new Error(`cannot listen for ${what} on ${host}:${port}: ${err.message}`));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeHttp(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => {
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** Starts the service with the given environment; resolves once every listener is open. */
export async function startService(options: StartOptions = {}): Promise<RunningService> {
  const settings = loadSettings(options.env ?? process.env);
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(settings.log);

  const stats = new StatsStore({
    isEnabled: settings.stats.enabled,
    maxRuleKeys: settings.stats.maxRuleKeys,
  });
  const { sinks, prometheus } = settings.stats.enabled
    ? createSinks(settings, stats, logger)
    : { sinks: [], prometheus: undefined };
  const flusher = settings.stats.enabled
    ? new StatsFlusher(stats, options.statsSink === undefined ? sinks : [options.statsSink], logger)
    : undefined;
  flusher?.start(settings.stats.flushIntervalMs);
  const isWorker = options.worker !== undefined;
  if (isWorker && prometheus !== undefined && flusher !== undefined) {
    // The supervisor serves the scrape and sums what every worker hands it.
    serveMetrics(async () => {
      await flusher.flush();
      return prometheus.sink.registry.getMetricsAsJSON();
    });
  }
  const metricsServer =
    prometheus === undefined || flusher === undefined || isWorker
      ? undefined
      : createMetricsServer(prometheus.path, {
          render: async () => {
            // A scrape sees every count up to now, not only up to the last periodic flush.
            await flusher.flush();
            return prometheus.sink.render();
          },
        });

  const store = await openStore(settings, clock, logger, stats);
  const health = new HealthState({
    requireConfig: settings.config.healthyWithAtLeastOneConfigLoaded,
  });
  const backend = settings.backend;
  if (backend.type === 'redis' && backend.healthCheckActiveConnection) {
    health.set('backend', store.isConnected());
    store.onConnectionChange((isConnected) => {
      health.set('backend', isConnected);
    });
  }

  const localCache =
    settings.limiter.localCacheSizeBytes > 0
      ? new OverLimitCache(settings.limiter.localCacheSizeBytes, clock)
      : undefined;
  if (localCache !== undefined) reportLocalCache(localCache, stats, STAT.localCache);
  const engine = new RateLimitEngine({
    store,
    stats,
    clock,
    settings: settings.limiter,
    logger,
    localCache,
  });

  const loadSuccess = stats.counter(STAT.configLoadSuccess);
  const loadError = stats.counter(STAT.configLoadError);
  let firstOutcome: () => void = () => undefined;
  const initialConfig = new Promise<void>((resolve) => {
    firstOutcome = resolve;
  });
  const listener: ConfigListener = {
    onSnapshot: (snapshot: ConfigSnapshot) => {
      engine.setSnapshot(snapshot);
      loadSuccess.inc();
      health.set('config', snapshot.domains.length > 0);
      logger.info('loaded a new configuration', { domains: snapshot.domains.join(',') });
      firstOutcome();
    },
    onRejected: (errors: readonly ConfigError[]) => {
      loadError.inc();
      for (const error of errors) logger.error(`configuration refused: ${error.message}`);
      logger.error(
        engine.currentSnapshot === undefined
          ? 'no configuration is loaded; requests are refused until a valid one arrives'
          : 'the previous configuration keeps serving',
      );
      firstOutcome();
    },
  };

  const provider = options.provider ?? createProvider(settings, stats, logger);
  await provider.start(listener);
  if (!settings.config.forceStartWithoutInitialConfig) await initialConfig;

  const grpcServer = new RateLimitGrpcServer({
    settings: settings.server.grpc,
    engine,
    health,
    stats,
    logger,
  });
  const httpServer = http.createServer(createHttpHandler({ engine, health, logger }));
  // With several workers the first one alone serves the debug listener: its answers (the
  // loaded configuration, statistics) then always come from the same process.
  const debugServer =
    options.worker === undefined || options.worker.index === 0
      ? createDebugServer({
          snapshot: () => engine.currentSnapshot,
          stats,
          health: () => health.describe(),
        })
      : undefined;
  const grpcPort = await grpcServer.listen();
  const httpPort = await listenHttp(
    httpServer,
    settings.server.http.host,
    settings.server.http.port,
    'HTTP',
  );
  const debugPort =
    debugServer === undefined
      ? undefined
      : await listenHttp(
          debugServer,
          settings.server.debug.host,
          settings.server.debug.port,
          'debug',
        );
  const metricsPort =
    metricsServer === undefined || prometheus === undefined
      ? undefined
      : await listenHttp(metricsServer, prometheus.host, prometheus.port, 'Prometheus metrics');
  logger.warn('listening', {
    grpc: settings.server.grpc.uds ?? `${settings.server.grpc.host}:${grpcPort}`,
    http: `${settings.server.http.host}:${httpPort}`,
    debug: debugPort === undefined ? undefined : `${settings.server.debug.host}:${debugPort}`,
    worker: options.worker?.index,
    metrics:
      prometheus === undefined || metricsPort === undefined
        ? undefined
        : `${prometheus.host}:${metricsPort}${prometheus.path}`,
    backend: settings.backend.type,
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      health.set('sigterm', false);
      await Promise.all([
        grpcServer.shutdown(DRAIN_TIMEOUT_MS),
        closeHttp(httpServer),
        debugServer === undefined ? Promise.resolve() : closeHttp(debugServer),
        metricsServer === undefined ? Promise.resolve() : closeHttp(metricsServer),
      ]);
      await provider.stop();
      await store.close();
      await flusher?.close();
    })();
    return stopping;
  };

  return {
    settings,
    ports: { http: httpPort, grpc: grpcPort, debug: debugPort, metrics: metricsPort },
    engine,
    stats,
    health,
    stop,
  };
}

function failStart(err: unknown): never {
  process.stderr.write(
    `ratelimit: ${err instanceof SettingsError ? err.message : describeError(err)}\n`,
  );
  process.exit(1);
}

/** WORKERS above 1: this process only supervises; the workers run the service. */
async function runSupervisor(settings: Settings): Promise<void> {
  const supervisor = new Supervisor({
    settings,
    logger: createLogger(settings.log),
    exit: (code) => process.exit(code),
  });
  const onSignal = (signal: NodeJS.Signals): void => {
    process.stderr.write(`ratelimit: ${signal} received, stopping the workers\n`);
    supervisor.stop(0);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    await supervisor.start();
  } catch (err: unknown) {
    process.stderr.write(`ratelimit: ${describeError(err)}\n`);
    supervisor.stop(1);
  }
}

/** The `ratelimit` command: starts, and stops cleanly on SIGTERM or SIGINT. */
export async function runFromCommandLine(): Promise<void> {
  const index = workerIndex();
  if (index === undefined) {
    let settings: Settings;
    try {
      settings = loadSettings(process.env);
    } catch (err: unknown) {
      failStart(err);
    }
    if (settings.server.workers > 1) {
      await runSupervisor(settings);
      return;
    }
  }
  let service: RunningService;
  try {
    service = await startService(index === undefined ? {} : { worker: { index } });
  } catch (err: unknown) {
    failStart(err);
  }
  if (index !== undefined) {
    announceReady();
    // Without its supervisor a worker gets no more connections: drain and go.
    process.once('disconnect', () => {
      void service.stop().then(() => process.exit(0));
    });
  }
  const onSignal = (signal: NodeJS.Signals): void => {
    process.stderr.write(`ratelimit: ${signal} received, draining\n`);
    service.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`ratelimit: error while stopping: ${describeError(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}
