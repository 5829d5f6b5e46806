// The configuration source of this process (CONFIG_TYPE): the file watcher or the xDS client,
// compiling what it loads for the counter store in use.
import type { CompileOptions } from './config';
import type { Logger } from './lib/logger';
import {
  FileConfigProvider,
  serviceCompiler,
  XdsConfigProvider,
  type ConfigCompiler,
  type ConfigProvider,
} from './provider';
import type { ConfigSettings, Settings } from './settings';
import { STAT, type StatsStore } from './stats';
import type { CounterStore } from './store';

type SourceOf = {
  readonly [K in ConfigSettings['source']['type']]: Extract<ConfigSettings['source'], { type: K }>;
};
interface ProviderDeps {
  readonly compile: CompileOptions;
  readonly compiler: ConfigCompiler;
  readonly stats: StatsStore;
  readonly logger: Logger;
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
  GRPC_XDS_SOTW: (source, { compile, compiler, logger }) =>
    new XdsConfigProvider({ settings: source, compile, compiler, logger }),
};

function providerFor<K extends keyof SourceOf>(
  source: SourceOf[K] & { readonly type: K },
  deps: ProviderDeps,
): ConfigProvider {
  const create: (typeof PROVIDERS)[K] = PROVIDERS[source.type];
  return create(source, deps);
}

/** The configuration source; what it loads is compiled for the store in use. */
export function createProvider(
  settings: Settings,
  store: CounterStore,
  { stats, logger }: { stats: StatsStore; logger: Logger },
): ConfigProvider {
  const compile = {
    stats,
    mergeDomainConfig: settings.config.mergeDomainConfig,
    sanitizeDots: settings.stats.sanitizeDescriptorMetricDots,
    // Rules the backend cannot count are refused with the file, not failed at request time.
    backend: { name: settings.backend.type, unsupported: store.unsupported },
  };
  return providerFor(settings.config.source, {
    compile,
    compiler: serviceCompiler(settings.config.compileTimeoutMs),
    stats,
    logger,
  });
}
