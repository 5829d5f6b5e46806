// Builds an engine over a store and YAML text, for scenario tests that drive time by hand.
import {
  compile,
  ConfigError,
  type BackendCapabilities,
  parseConfigFile,
  type ConfigDocument,
  type ConfigSnapshot,
} from '../../src/config';
import {
  OverLimitCache,
  RateLimitEngine,
  RecentDecisions,
  type RateLimitRequest,
  type RequestDescriptor,
} from '../../src/engine';
import type { Clock } from '../../src/lib/clock';
import { silentLogger } from '../../src/lib/logger';
import { loadSettings, type LimiterSettings } from '../../src/settings';
import { StatsStore } from '../../src/stats';
import type { CounterStore } from '../../src/store';

/** Compiles YAML documents (one string per file) or throws with every error. */
export function snapshotOf(
  files: readonly string[],
  stats: StatsStore,
  options: { merge?: boolean; sanitizeDots?: boolean; backend?: BackendCapabilities } = {},
): ConfigSnapshot {
  const docs: ConfigDocument[] = files.map((text, i) => {
    const parsed = parseConfigFile(`file${i}.yaml`, text);
    if (parsed instanceof ConfigError) throw parsed;
    return parsed;
  });
  const result = compile(docs, {
    stats,
    mergeDomainConfig: options.merge ?? false,
    sanitizeDots: options.sanitizeDots ?? false,
    ...(options.backend === undefined ? {} : { backend: options.backend }),
  });
  if (!result.ok) throw new Error(result.errors.map((e) => e.message).join('\n'));
  return result.snapshot;
}

/** Limiter settings from environment-style overrides. */
export function limiterSettings(env: Record<string, string> = {}): LimiterSettings {
  return loadSettings({ EXPIRATION_JITTER_MAX_SECONDS: '0', ...env }).limiter;
}

export interface EngineFixture {
  readonly engine: RateLimitEngine;
  readonly stats: StatsStore;
  readonly localCache: OverLimitCache | undefined;
  /** The ring of recent refusals, when env sets DEBUG_RECENT_DECISIONS above 0. */
  readonly recentDecisions: RecentDecisions | undefined;
}

/** An engine over `store` and the YAML `files`; the expiry jitter draws `random` (0 by default). */
export function engineOf(
  store: CounterStore,
  clock: Clock,
  files: readonly string[],
  env: Record<string, string> = {},
  random: () => number = () => 0,
): EngineFixture {
  const stats = new StatsStore();
  const settings = limiterSettings(env);
  const localCache =
    settings.localCacheSizeBytes > 0
      ? new OverLimitCache(settings.localCacheSizeBytes, clock)
      : undefined;
  const capacity = Number(env.DEBUG_RECENT_DECISIONS ?? '0');
  const recentDecisions = capacity > 0 ? new RecentDecisions(capacity, clock) : undefined;
  const engine = new RateLimitEngine({
    store,
    stats,
    clock,
    settings,
    logger: silentLogger,
    localCache,
    random,
    ...(recentDecisions === undefined ? {} : { recentDecisions }),
  });
  // Compiled for this store, as the service compiles: what it cannot run is refused.
  const backend = { name: store.backend, unsupported: store.unsupported };
  engine.setSnapshot(
    snapshotOf(files, stats, { merge: env.MERGE_DOMAIN_CONFIG === 'true', backend }),
  );
  return { engine, stats, localCache, recentDecisions };
}

/** A descriptor from `[key, value]` pairs. */
export function descriptor(
  pairs: readonly (readonly [string, string])[],
  extra: Partial<Omit<RequestDescriptor, 'entries'>> = {},
): RequestDescriptor {
  return {
    entries: pairs.map(([key, value]) => ({ key, value })),
    limit: extra.limit,
    hitsAddend: extra.hitsAddend,
    isNegativeHits: extra.isNegativeHits ?? false,
  };
}

export function request(
  domain: string,
  descriptors: readonly RequestDescriptor[],
  hitsAddend = 0,
): RateLimitRequest {
  return { domain, descriptors, hitsAddend };
}
