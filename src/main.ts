// The composition root: the only place that wires implementations together. startService reads
// top to bottom: settings, statistics, store, engine, provider, listeners, then one shutdown.
import { originFields, type ConfigError, type ConfigOrigin, type ConfigSnapshot } from './config';
import {
  announceReady,
  serveMetrics,
  Supervisor,
  supervisorLink,
  workerIndex,
  type SupervisorOptions,
} from './cluster';
import { answerServiceArgs } from './cli/service-args';
import { OverLimitCache, RateLimitEngine, RecentDecisions, reportLocalCache } from './engine';
import { systemClock, type Clock } from './lib/clock';
import { describeError } from './lib/errors';
import { createLogger, writeProcessLine, type LogFormat, type Logger } from './lib/logger';
import type { ConfigProvider } from './provider';
import {
  ConfigStatus,
  createListeners,
  HealthState,
  catchStrayErrors,
  openMetricsListener,
  type ListenerPorts,
  type Listeners,
  type MetricsEndpoint,
} from './server';
import {
  loadSettings,
  logFormatOf,
  SettingsError,
  type ConfigSettings,
  type Environment,
  type Settings,
} from './settings';
import {
  STAT,
  startStatistics,
  type PrometheusScrape,
  type Statistics,
  type StatsSink,
  type StatsStore,
  type XdsStatus,
} from './stats';
import { openServiceQuota, followingQuota } from './service-quota';
import { createPodConfig, createProvider, supervisedProvider, watchXds } from './service-provider';
import { openServiceStore } from './service-store';
import { workerStatistics } from './service-workers';
import { stopOnSignals, stopWithNpm } from './stop-on-signals';
import type { QuotaService } from './quota';
import type { CounterStore } from './store';
import { startTracing, type Tracing } from './tracing';

/** How long in-flight calls may take to finish after SIGTERM before they are cut. */
const DRAIN_TIMEOUT_MS = 15_000;

/** A running service; tests and the command line hold one. */
export interface RunningService {
  readonly settings: Settings;
  /** Debug is unbound in workers other than the first; metrics while USE_PROMETHEUS is off. */
  readonly ports: ListenerPorts;
  readonly engine: RateLimitEngine;
  readonly stats: StatsStore;
  readonly health: HealthState;
  readonly logger: Logger;
  /** Health turns unhealthy, listeners stop, in-flight calls finish, backends close. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** The environment to read settings from; process.env when omitted. */
  readonly env?: Environment;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Where flushed statistics go instead of the push sinks the settings choose (tests). */
  readonly statsSink?: StatsSink;
  /** A configuration source to use instead of the one the settings choose (tests). */
  readonly provider?: ConfigProvider;
  /** Set when a supervisor forked this process as one of WORKERS. */
  readonly worker?: { readonly index: number };
}

/** What is running so far; the shutdown sequence stops whatever is there. */
interface Parts {
  readonly health: HealthState;
  readonly statistics: Statistics;
  tracing?: Tracing | undefined;
  store?: CounterStore;
  quota?: QuotaService;
  provider?: ConfigProvider;
  listeners?: Listeners;
}

/** Starts the service with the given environment; resolves once every listener is open. */
export async function startService(options: StartOptions = {}): Promise<RunningService> {
  const settings = loadSettings(options.env);
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(settings.log);
  const sinkOverride = options.statsSink === undefined ? {} : { sinkOverride: options.statsSink };
  const statistics = startStatistics(settings.stats, { logger, ...sinkOverride });
  const stats = statistics.store;
  const health = healthOf(settings, clock);
  const configStatus = new ConfigStatus(() => clock.nowMs());
  const isDebugServed = options.worker === undefined || options.worker.index === 0;
  const parts: Parts = { health, statistics };
  const stop = shutdownSequence(parts);
  try {
    const tracing = startTracing(settings.tracing, logger);
    parts.tracing = tracing;
    const store = await openServiceStore(settings, { clock, logger, stats, health, tracing });
    parts.store = store;
    health.followBackend(store);
    const engine = createEngine(settings, { store, stats, clock, logger, isDebugServed });
    const quota = await openServiceQuota(settings, { clock, logger, stats });
    parts.quota = quota;
    const onXdsStatus = watchXds(settings, { stats, configStatus, clock, isDebugServed });
    const source = { store, stats, logger, onXdsStatus, isDebugServed };
    const provider = followingQuota(
      options.provider ?? configSource(settings, options.worker, source),
      quota,
    );
    parts.provider = provider;
    // With WORKERS the supervisor logs a refusal once for the pod; its workers do not repeat it.
    const isRefusalLogged = options.worker === undefined;
    // And one worker counts the pod's loads, so that every worker's totals count each once.
    const isLoadCounted = isDebugServed;
    const following = { engine, health, configStatus, stats, logger, isRefusalLogged };
    await followConfig(provider, settings.config, { ...following, isLoadCounted });
    const listeners = await createListeners({
      settings: settings.server,
      limits: settings.limits,
      engine,
      health,
      configStatus,
      stats,
      logger,
      tracer: tracing?.requests,
      isDebugServed,
      metrics: prometheusScrape.inService(statistics.prometheus, options.worker),
      quota,
      ...workerStatistics(options.worker, stats),
    });
    parts.listeners = listeners;
    const where = { ...listeners.addresses, worker: options.worker?.index };
    logger.info('listening', { ...where, backend: settings.backend.type });
    return { settings, ports: listeners.ports, engine, stats, health, logger, stop };
  } catch (err: unknown) {
    await stop();
    throw err;
  }
}

/** The service's health, following what the settings say it follows. */
function healthOf(settings: Settings, clock: Clock): HealthState {
  const followsBackend =
    settings.backend.type === 'redis' && settings.backend.healthCheckActiveConnection;
  return new HealthState({
    requireConfig: settings.config.healthyWithAtLeastOneConfigLoaded,
    // memcached is waited for at start-up only: the reference's health never follows it.
    backendAffectsHealth:
      settings.backend.type === 'memcache' ? 'until-first-connection' : followsBackend,
    breakerAffectsHealth: followsBackend,
    nowMs: () => clock.nowMs(),
  });
}

/**
 * The configuration source the settings choose; a worker follows the configuration its
 * supervisor compiles once for the pod instead.
 */
function configSource(
  settings: Settings,
  worker: StartOptions['worker'],
  parts: {
    store: CounterStore;
    stats: StatsStore;
    logger: Logger;
    onXdsStatus: ((status: XdsStatus) => void) | undefined;
    isDebugServed: boolean;
  },
): ConfigProvider {
  const { store, isDebugServed, ...deps } = parts;
  return worker === undefined
    ? createProvider(settings, store, deps)
    : supervisedProvider(settings, store, { ...deps, link: supervisorLink, isDebugServed });
}

/**
 * The engine, with the local over-limit cache when LOCAL_CACHE_SIZE_IN_BYTES asks for one, and
 * the ring of recent refusals (DEBUG_RECENT_DECISIONS) in the process that serves debug.
 */
function createEngine(
  settings: Settings,
  parts: {
    store: CounterStore;
    stats: StatsStore;
    clock: Clock;
    logger: Logger;
    isDebugServed: boolean;
  },
): RateLimitEngine {
  const { store, stats, clock, logger } = parts;
  const limiter = settings.limiter;
  const localCache =
    limiter.localCacheSizeBytes > 0
      ? new OverLimitCache(limiter.localCacheSizeBytes, clock)
      : undefined;
  if (localCache !== undefined) reportLocalCache(localCache, stats, STAT.localCache);
  const capacity = settings.server.debug.recentDecisions;
  const recent =
    parts.isDebugServed && capacity > 0
      ? { recentDecisions: new RecentDecisions(capacity, clock) }
      : {};
  return new RateLimitEngine({
    store,
    stats,
    clock,
    settings: limiter,
    logger,
    localCache,
    ...recent,
  });
}

/**
 * Starts the provider with a listener that swaps the engine's snapshot in, and waits for the
 * first outcome unless FORCE_START_WITHOUT_INITIAL_CONFIG says not to.
 */
async function followConfig(
  provider: ConfigProvider,
  settings: ConfigSettings,
  parts: {
    engine: RateLimitEngine;
    health: HealthState;
    configStatus: ConfigStatus;
    stats: StatsStore;
    logger: Logger;
    isRefusalLogged: boolean;
    isLoadCounted: boolean;
  },
): Promise<void> {
  const { engine, health, configStatus, stats, logger, isRefusalLogged } = parts;
  const counted = (name: string): { inc(): void } =>
    parts.isLoadCounted ? stats.counter(name) : { inc: () => undefined };
  const loadSuccess = counted(STAT.configLoadSuccess);
  const loadError = counted(STAT.configLoadError);
  let firstOutcome: () => void = () => undefined;
  const initialConfig = new Promise<void>((resolve) => {
    firstOutcome = resolve;
  });
  await provider.start({
    onSnapshot: (snapshot: ConfigSnapshot, origin?: ConfigOrigin) => {
      engine.setSnapshot(snapshot);
      configStatus.loaded(origin);
      loadSuccess.inc();
      health.set('config', snapshot.domains.length > 0);
      logger.info('loaded a new configuration', { domains: snapshot.domains.join(',') });
      firstOutcome();
    },
    onRejected: (errors: readonly ConfigError[], origin?: ConfigOrigin) => {
      loadError.inc();
      configStatus.refused(errors);
      firstOutcome();
      if (!isRefusalLogged) return;
      // One line a refusal, every reason in it: what follows a refusal is part of it.
      const outcome =
        engine.currentSnapshot === undefined
          ? 'no configuration is loaded; requests are refused until a valid one arrives'
          : 'the previous configuration keeps serving';
      const reasons = errors.map((error) => error.message).join('; ');
      logger.error(
        `configuration refused${reasons === '' ? '' : `: ${reasons}`}; ${outcome}`,
        originFields(origin),
      );
    },
  });
  if (!settings.forceStartWithoutInitialConfig) await initialConfig;
}

/**
 * Who serves the Prometheus scrape. With WORKERS=1 the service's own metrics listener does.
 * With WORKERS above 1 the supervisor does: it opens the one listener and sums what every
 * worker hands it over IPC, so a worker opens none and answers the supervisor instead.
 */
const prometheusScrape = {
  inService(
    prometheus: PrometheusScrape | undefined,
    worker: StartOptions['worker'],
  ): MetricsEndpoint | undefined {
    if (prometheus === undefined || worker === undefined) return prometheus;
    serveMetrics(() => prometheus.collect());
    return undefined;
  },
  inSupervisor(settings: Settings): SupervisorOptions['serveMetrics'] {
    const sink = settings.stats.sinks.find((s) => s.type === 'prometheus');
    if (!settings.stats.enabled || sink === undefined) return undefined;
    return (scrape) => openMetricsListener({ ...sink, render: scrape });
  },
};

/**
 * Health unhealthy, listeners drain, provider stops, store closes, the last spans are exported,
 * statistics flush.
 */
function shutdownSequence(parts: Parts): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= (async () => {
      parts.health.set('sigterm', false);
      await parts.listeners?.close(DRAIN_TIMEOUT_MS);
      await parts.quota?.close();
      await parts.provider?.stop();
      await parts.store?.close();
      await parts.tracing?.shutdown();
      await parts.statistics.close();
    })();
    return stopping;
  };
}

function failStart(err: unknown, format: LogFormat): never {
  writeProcessLine(
    format,
    'fatal',
    err instanceof SettingsError ? err.message : describeError(err),
  );
  process.exit(1);
}

/**
 * WORKERS above 1: this process supervises and compiles the configuration once for the pod;
 * the workers run the service.
 */
async function runSupervisor(settings: Settings): Promise<void> {
  const logger = createLogger(settings.log);
  const supervisor = new Supervisor({
    workers: settings.server.workers,
    logger,
    clock: systemClock,
    config: createPodConfig(settings, logger),
    serveMetrics: prometheusScrape.inSupervisor(settings),
    exit: (code) => process.exit(code),
  });
  const format = settings.log.format;
  const onSignal = (signal: NodeJS.Signals): void => {
    writeProcessLine(format, 'info', `${signal} received, stopping the workers`);
    supervisor.stop(0);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    await supervisor.start();
  } catch (err: unknown) {
    writeProcessLine(format, 'fatal', describeError(err));
    supervisor.stop(1);
  }
}

/**
 * The `ratelimit` command. `--version` prints the name and version and `--help` the settings,
 * without reading them (service-args.ts);
 * otherwise it starts (as the supervisor of WORKERS, or as one service process) and runs until
 * SIGTERM or SIGINT. The only place besides settings/ that reads process.env.
 */
export async function runFromCommandLine(
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  const answered = answerServiceArgs(argv, process.stdout, process.stderr);
  if (answered !== undefined) {
    process.exitCode = answered;
    return;
  }
  const env = process.env;
  const format = logFormatOf(env);
  const index = workerIndex(env);
  if (index === undefined) {
    let settings: Settings;
    try {
      settings = loadSettings(env);
    } catch (err: unknown) {
      failStart(err, format);
    }
    if (settings.server.workers > 1) {
      await runSupervisor(settings);
      return;
    }
  }
  let service: RunningService;
  try {
    service = await startService(index === undefined ? { env } : { env, worker: { index } });
  } catch (err: unknown) {
    failStart(err, format);
  }
  if (index !== undefined) announceReady();
  catchStrayErrors(service);
  stopOnSignals(service, index !== undefined, format);
  // npm sets npm_execpath for the scripts and the commands it runs (npm run, npx).
  if (index === undefined) stopWithNpm(service, env.npm_execpath !== undefined, format);
}
