// What operators ask of the engine: each rule's limits by algorithm, and the counters a
// descriptor feeds read without counting (the debug listener's /counters and /rules).
import type { ConfigSnapshot, DescriptorEntry, RateLimitRule, Unit } from '../config';
import type { LimiterSettings } from '../settings';
import type { CounterRead, CounterStore } from '../store';
import { fixedWindowKey } from './fixed-window';
import type { OverLimitCache } from './local-cache';
import { windowOf } from './windows';

/** How a limit counts; one value per algorithm the engine has. */
export type Algorithm = 'fixed_window';

/** One limit of a rule. A rule has one today; the list has room for several. */
export interface LimitDescription {
  readonly algorithm: Algorithm;
  readonly requestsPerUnit: number;
  readonly unit: Unit;
  readonly name: string | undefined;
}

/** One limit's counter for one descriptor, as the store holds it now. */
export interface CounterReading extends LimitDescription {
  readonly key: string;
  /** The store's value, read without incrementing (0 for a key not there). */
  readonly count: number;
  readonly remaining: number;
  readonly windowStartSeconds: number;
  /** Unix seconds at which this window ends and the next one starts from 0. */
  readonly windowEndSeconds: number;
  /** Whole seconds until then. */
  readonly resetSeconds: number;
  /** The local over-limit cache answers this key without the store until the window ends. */
  readonly isInLocalCache: boolean;
}

/** What one descriptor matched and what its counters hold. */
export interface DescriptorReading {
  readonly entries: readonly DescriptorEntry[];
  /** The rule the descriptor matches; undefined when none does. */
  readonly rule: RateLimitRule | undefined;
  /** One per limit of the rule; empty for an unlimited rule or no match. */
  readonly counters: readonly CounterReading[];
}

export type CounterLookup =
  | { readonly ok: true; readonly domain: string; readonly descriptors: DescriptorReading[] }
  | { readonly ok: false; readonly reason: 'no-config' | 'unknown-domain' };

/** The limits a rule enforces; none for an unlimited rule. */
export function limitsOf(rule: RateLimitRule): LimitDescription[] {
  if (rule.isUnlimited || rule.unit === undefined) return [];
  return [
    {
      algorithm: 'fixed_window',
      requestsPerUnit: rule.requestsPerUnit,
      unit: rule.unit,
      name: rule.name,
    },
  ];
}

/** What reading counters needs from the engine. */
export interface InspectEnv {
  readonly store: CounterStore;
  readonly settings: LimiterSettings;
  readonly localCache: OverLimitCache | undefined;
}

interface Planned {
  readonly entries: readonly DescriptorEntry[];
  readonly rule: RateLimitRule | undefined;
  readonly counters: (Omit<CounterReading, 'count' | 'remaining'> & { read: CounterRead })[];
}

/** Each descriptor's rule and counter keys, as a request at `nowSeconds` would count them. */
function plan(
  snapshot: ConfigSnapshot,
  domain: string,
  descriptors: readonly (readonly DescriptorEntry[])[],
  nowSeconds: number,
  env: InspectEnv,
): Planned[] {
  return descriptors.map((entries) => {
    const query = { entries, limit: undefined };
    const match = snapshot.findLimit(domain, query);
    if (match === undefined) return { entries, rule: undefined, counters: [] };
    const counters = limitsOf(match.rule).map((limit) => {
      const window = windowOf(limit.unit, nowSeconds, env.settings.useCalendarMonth);
      const key = fixedWindowKey(match, domain, query, window, env.settings);
      return {
        ...limit,
        key,
        read: { key, isPerSecond: limit.unit === 'SECOND' },
        windowStartSeconds: window.startSeconds,
        windowEndSeconds: nowSeconds + window.resetSeconds,
        resetSeconds: window.resetSeconds,
        isInLocalCache: env.localCache?.has(key) === true,
      };
    });
    return { entries, rule: match.rule, counters };
  });
}

/**
 * Reads the counters each descriptor feeds, in one store call, without changing them. Each
 * descriptor is matched alone: `replaces` between descriptors of one request does not apply.
 * Rejects with the store's error when the backend fails.
 */
export async function readCounters(
  snapshot: ConfigSnapshot | undefined,
  domain: string,
  descriptors: readonly (readonly DescriptorEntry[])[],
  nowSeconds: number,
  env: InspectEnv,
): Promise<CounterLookup> {
  if (snapshot === undefined) return { ok: false, reason: 'no-config' };
  if (!snapshot.hasDomain(domain)) return { ok: false, reason: 'unknown-domain' };
  const planned = plan(snapshot, domain, descriptors, nowSeconds, env);
  const reads = planned.flatMap((p) => p.counters.map((c) => c.read));
  const values = reads.length === 0 ? [] : await env.store.read(reads);
  let next = 0;
  const readings = planned.map(({ entries, rule, counters }) => ({
    entries,
    rule,
    counters: counters.map(({ read: _read, ...counter }) => {
      const count = values[next++] ?? 0;
      return { ...counter, count, remaining: Math.max(0, counter.requestsPerUnit - count) };
    }),
  }));
  return { ok: true, domain, descriptors: readings };
}
