// The configuration source of this process (CONFIG_TYPE): the file watcher or the xDS client,
// compiling what it loads for the counter store in use. With WORKERS above 1 it runs once, in
// the supervisor, and each worker follows what the supervisor hands it.
import type { SupervisorLink } from './cluster';
import type { CompileOptions } from './config';
import type { Logger } from './lib/logger';
import {
  FileConfigProvider,
  ProviderPodConfig,
  serviceCompiler,
  SupervisedProvider,
  XdsConfigProvider,
  type ConfigCompiler,
  type ConfigProvider,
} from './provider';
import type { ConfigSettings, Settings } from './settings';
import type { ConfigStatus } from './server';
import type { Clock } from './lib/clock';
import { STAT, StatsStore, XdsStatistics, type XdsStatus } from './stats';
import { BACKEND_UNSUPPORTED, type CounterStore } from './store';

type SourceOf = {
  readonly [K in ConfigSettings['source']['type']]: Extract<ConfigSettings['source'], { type: K }>;
};
interface ProviderDeps {
  readonly compile: CompileOptions;
  readonly compiler: ConfigCompiler;
  readonly stats: StatsStore;
  readonly logger: Logger;
  /** Told each change of the xDS client's status. */
  readonly onXdsStatus: ((status: XdsStatus) => void) | undefined;
}

/** One line per configuration source (CONFIG_TYPE). */
const PROVIDERS: {
  readonly [K in keyof SourceOf]: (source: SourceOf[K], deps: ProviderDeps) => ConfigProvider;
} = {
  FILE: (source, { compile, compiler, stats, logger }) =>
    new FileConfigProvider({
      settings: source,
      compile,
      compiler,
      logger,
      loaderStats: {
        loadAttempts: stats.counter(STAT.runtimeLoadAttempts),
        loadFailures: stats.counter(STAT.runtimeLoadFailures),
        numValues: stats.gauge(STAT.runtimeNumValues),
      },
    }),
  GRPC_XDS_SOTW: (source, { compile, compiler, logger, onXdsStatus }) =>
    new XdsConfigProvider({
      settings: source,
      compile,
      compiler,
      logger,
      ...(onXdsStatus === undefined ? {} : { onStatus: onXdsStatus }),
    }),
};

function providerFor<K extends keyof SourceOf>(
  source: SourceOf[K] & { readonly type: K },
  deps: ProviderDeps,
): ConfigProvider {
  const create: (typeof PROVIDERS)[K] = PROVIDERS[source.type];
  return create(source, deps);
}

/** How a configuration is compiled for a backend that cannot count `unsupported`. */
function compileOptions(
  settings: Settings,
  unsupported: CounterStore['unsupported'],
  stats: StatsStore,
): CompileOptions {
  return {
    stats,
    mergeDomainConfig: settings.config.mergeDomainConfig,
    sanitizeDots: settings.stats.sanitizeDescriptorMetricDots,
    // Rules the backend cannot count are refused with the file, not failed at request time.
    backend: { name: settings.backend.type, unsupported },
  };
}

/** The configuration source; what it loads is compiled for the store in use. */
export function createProvider(
  settings: Settings,
  store: CounterStore,
  deps: Pick<ProviderDeps, 'stats' | 'logger' | 'onXdsStatus'>,
): ConfigProvider {
  return providerFor(settings.config.source, {
    ...deps,
    compile: compileOptions(settings, store.unsupported, deps.stats),
    compiler: serviceCompiler(settings.config.compileTimeoutMs),
  });
}

/**
 * The pod's one configuration source, run by the supervisor of WORKERS: the provider the
 * settings choose, compiling for the backend the workers open. Its snapshots are only handed
 * over, so they declare no statistics here (each worker declares its own as it builds).
 */
export function createPodConfig(settings: Settings, logger: Logger): ProviderPodConfig {
  // The loader's statistics here, forwarded to every worker; rules are declared in each worker.
  const loading = new StatsStore();
  const unsupported = BACKEND_UNSUPPORTED[settings.backend.type];
  // The xDS client's status goes to the workers as it is, not as statistics of loading: only
  // the worker that serves the debug listener reports it, so that summing the workers' metrics
  // counts it once.
  let forwardXds: (status: XdsStatus) => void = () => undefined;
  const provider = providerFor(settings.config.source, {
    compile: compileOptions(settings, unsupported, new StatsStore(false)),
    compiler: serviceCompiler(settings.config.compileTimeoutMs),
    stats: loading,
    logger,
    onXdsStatus: (status) => {
      forwardXds(status);
    },
  });
  const pod = new ProviderPodConfig(provider, () => loading.snapshot());
  forwardXds = (status) => {
    pod.xds(status);
  };
  return pod;
}

/** A worker's configuration source: what its supervisor compiles, built for this worker. */
export function supervisedProvider(
  settings: Settings,
  store: CounterStore,
  deps: Pick<ProviderDeps, 'stats' | 'logger' | 'onXdsStatus'> & {
    link: SupervisorLink;
    isDebugServed: boolean;
  },
): ConfigProvider {
  const { stats, logger, link, onXdsStatus, isDebugServed } = deps;
  return new SupervisedProvider({
    compile: compileOptions(settings, store.unsupported, stats),
    link,
    logger,
    stats,
    reportsLoading: isDebugServed,
    ...(onXdsStatus === undefined ? {} : { onXdsStatus }),
  });
}

/**
 * Where the xDS client's status goes (CONFIG_TYPE=GRPC_XDS_SOTW): the debug listener's page,
 * and statistics in the process that serves it, which with WORKERS is the one worker of all
 * that reports them, so that the summed metrics count them once.
 */
export function watchXds(
  settings: Settings,
  parts: { stats: StatsStore; configStatus: ConfigStatus; clock: Clock; isDebugServed: boolean },
): ((status: XdsStatus) => void) | undefined {
  if (settings.config.source.type !== 'GRPC_XDS_SOTW') return undefined;
  const { clock, configStatus } = parts;
  const statistics = parts.isDebugServed
    ? new XdsStatistics(parts.stats, () => clock.nowMs())
    : undefined;
  return (status) => {
    statistics?.update(status);
    configStatus.xds(status);
  };
}
