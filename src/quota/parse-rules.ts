// Reads a domain's `quota_buckets` list (parsed YAML or a decoded resource) into compiled rules,
// or the problems that refuse it, each with its reason and path.
import { parseGoDurationMs } from '../lib/durations';
import { deepFreeze } from '../lib/freeze';
import { MAX_UINT32 } from '../lib/uint32';
import {
  QUOTA_UNITS,
  type QuotaKeyMatcher,
  type QuotaPolicy,
  type QuotaRule,
  type QuotaUnit,
} from './rules';
import { MAX_ASSIGNMENT_TTL_MS, MIN_ASSIGNMENT_TTL_MS } from './timing';

/** The configuration error codes a quota rule may be refused with (a subset of config's). */
export type QuotaProblemCode =
  | 'BAD_VALUE'
  | 'UNKNOWN_KEY'
  | 'EMPTY_KEY'
  | 'INVALID_UNIT'
  | 'INVALID_ALGORITHM'
  | 'BAD_LIMIT'
  | 'LIST_NOT_MAPS'
  | 'DUPLICATE_DESCRIPTOR';

/** Where a problem is in its file: as the config loader reports positions. */
export interface QuotaSourcePosition {
  /** Absent for a source without lines (an xDS resource): the path alone. */
  readonly line?: number;
  readonly column?: number;
  readonly path?: string;
}

/** One reason the list is refused. */
export interface QuotaProblem {
  readonly code: QuotaProblemCode;
  /** What is wrong, in the config loader's words ("config error, ..."). */
  readonly reason: string;
  /** The YAML path of the offending node, as `quota_buckets[0].unit`. */
  readonly path: string;
  /** Line and column when the source has them (a file); undefined for an xDS resource. */
  readonly position: QuotaSourcePosition | undefined;
}

/** The rules of one list, or every problem found in it. */
export type QuotaRulesResult =
  | { readonly ok: true; readonly rules: readonly QuotaRule[] }
  | { readonly ok: false; readonly problems: readonly QuotaProblem[] };

/** Finds the line and column of a YAML path in the source, when it has them. */
export type Locate = (path: string) => QuotaSourcePosition | undefined;

const ITEM_KEYS = new Set([
  'bucket',
  'requests_per_unit',
  'unit',
  'strategy',
  'max_tokens',
  'assignment_ttl',
  'blanket_rule',
]);
/** requests_per_time_unit is refused with its own reason (readStrategy). */
const STRATEGIES = ['token_bucket'] as const;
const BLANKET_RULES = ['allow_all', 'deny_all'] as const;
export const QUOTA_LIST_KEY = 'quota_buckets';

type Json = unknown;
type Item = Readonly<Record<string, Json>>;

function isMap(value: Json): value is Item {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(value: Json): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return JSON.stringify(scalarText(value) ?? typeof value);
}

/**
 * Collects the problems of one list; each reader reports through it and carries on. Readers
 * return null for a value they refused and undefined for one that is absent.
 */
class Problems {
  readonly list: QuotaProblem[] = [];
  constructor(private readonly locate: Locate | undefined) {}

  /** Records the problem; null, which the readers return for a refused value. */
  add(code: QuotaProblemCode, reason: string, path: string): null {
    this.list.push({
      code,
      reason: `config error, ${reason}`,
      path,
      position: this.locate?.(path),
    });
    return null;
  }
}

/** A scalar value as text (numbers and booleans as written), or undefined for anything else. */
function scalarText(value: Json): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function readMatcher(
  key: string,
  raw: Json,
  path: string,
  problems: Problems,
): QuotaKeyMatcher | null {
  if (key === '') return problems.add('EMPTY_KEY', 'a bucket key is empty', path);
  const value = scalarText(raw);
  const at = `${path}.${key}`;
  if (value === undefined || value === '')
    return problems.add('BAD_VALUE', `bucket key '${key}' needs a value, got ${shown(raw)}`, at);
  const star = value.indexOf('*');
  if (star >= 0 && star !== value.length - 1)
    return problems.add(
      'BAD_VALUE',
      `bucket value ${JSON.stringify(value)}: * may only end a value (a prefix) or be the whole value`,
      at,
    );
  const kind = value === '*' ? 'any' : star >= 0 ? 'prefix' : 'exact';
  return Object.freeze({ key, value, kind });
}

function readBucket(raw: Json, path: string, problems: Problems): QuotaKeyMatcher[] | null {
  if (raw === undefined)
    return problems.add('BAD_VALUE', "each item of quota_buckets needs 'bucket'", path);
  const at = `${path}.bucket`;
  if (!isMap(raw) || Object.keys(raw).length === 0)
    return problems.add(
      'BAD_VALUE',
      `'bucket' must be a map of keys and values, got ${shown(raw)}`,
      at,
    );
  const matchers: QuotaKeyMatcher[] = [];
  for (const [key, value] of Object.entries(raw)) {
    const matcher = readMatcher(key, value, at, problems);
    if (matcher === null) return null;
    matchers.push(matcher);
  }
  return matchers.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function readWhole(
  item: Item,
  key: string,
  min: number,
  path: string,
  problems: Problems,
): number | undefined | null {
  const raw = item[key];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < min || raw > MAX_UINT32)
    return problems.add(
      'BAD_VALUE',
      `'${key}' must be a whole number from ${min} to ${MAX_UINT32}, got ${shown(raw)}`,
      `${path}.${key}`,
    );
  return raw;
}

function readWord<const T extends string>(
  item: Item,
  key: string,
  words: readonly T[],
  code: QuotaProblemCode,
  path: string,
  problems: Problems,
): T | undefined | null {
  const raw = item[key];
  if (raw === undefined) return undefined;
  const text = typeof raw === 'string' ? raw.toLowerCase() : undefined;
  const found = words.find((w) => w.toLowerCase() === text);
  if (found !== undefined) return found;
  return problems.add(
    code,
    `'${key}' must be one of ${words.join(', ')}, got ${shown(raw)}`,
    `${path}.${key}`,
  );
}

function readUnit(item: Item, path: string, problems: Problems): QuotaUnit | undefined | null {
  const raw = item.unit;
  if (typeof raw === 'string' && raw.toLowerCase() === 'week')
    return problems.add(
      'INVALID_UNIT',
      "unit week: Envoy's RateLimitUnit has no week; use day with a seventh of the budget",
      `${path}.unit`,
    );
  const words = QUOTA_UNITS.map((u) => u.toLowerCase());
  const unit = readWord(item, 'unit', words, 'INVALID_UNIT', path, problems);
  return typeof unit === 'string' ? (unit.toUpperCase() as QuotaUnit) : unit;
}

const seconds = (ms: number): string => `${String(ms / 1000)}s`;

/**
 * `assignment_ttl`, from MIN_ASSIGNMENT_TTL_MS to MAX_ASSIGNMENT_TTL_MS (timing.ts says why).
 * A shorter one is refused rather than raised: the service would not do what the file says,
 * and a warning at each load is easily missed.
 */
function readTtl(item: Item, path: string, problems: Problems): number | undefined | null {
  const raw = item.assignment_ttl;
  if (raw === undefined) return undefined;
  const ms = typeof raw === 'string' ? parseGoDurationMs(raw) : undefined;
  const at = `${path}.assignment_ttl`;
  const range = `from ${seconds(MIN_ASSIGNMENT_TTL_MS)} to ${seconds(MAX_ASSIGNMENT_TTL_MS)} (30m)`;
  if (ms === undefined || ms > MAX_ASSIGNMENT_TTL_MS)
    return problems.add(
      'BAD_VALUE',
      `'assignment_ttl' must be a duration ${range} such as 30s or 2m, got ${shown(raw)}`,
      at,
    );
  if (ms < MIN_ASSIGNMENT_TTL_MS)
    return problems.add(
      'BAD_VALUE',
      `'assignment_ttl' must be at least ${seconds(MIN_ASSIGNMENT_TTL_MS)}, got ${shown(raw)}: Envoy starts a lost stream again only at its next 5 s report and a restarted service waits 6 s for every Envoy to report, so a shorter assignment runs out and Envoy starts again with a full bucket`,
      at,
    );
  return ms;
}

/** `blanket_rule`: nothing else but the bucket and a TTL may be set beside it. */
function readBlanket(item: Item, path: string, problems: Problems): QuotaPolicy | null {
  const rule = readWord(item, 'blanket_rule', BLANKET_RULES, 'BAD_VALUE', path, problems);
  if (rule === null || rule === undefined) return null;
  for (const key of ['requests_per_unit', 'unit', 'strategy', 'max_tokens']) {
    if (item[key] !== undefined)
      return problems.add(
        'BAD_VALUE',
        `'${key}' has no meaning beside 'blanket_rule'`,
        `${path}.${key}`,
      );
  }
  return { kind: 'blanket', rule };
}

/**
 * `strategy`: token_bucket, the default. requests_per_time_unit is refused: Envoy's filter logs
 * "RequestsPerTimeUnit rate limit strategies are not yet supported" and skips the assignment,
 * the bucket keeping whatever it held (global_client_impl.cc, onQuotaResponseImpl).
 */
function readStrategy(
  item: Item,
  path: string,
  problems: Problems,
): 'token_bucket' | undefined | null {
  const raw = item.strategy;
  if (typeof raw === 'string' && raw.toLowerCase() === 'requests_per_time_unit')
    return problems.add(
      'INVALID_ALGORITHM',
      "strategy requests_per_time_unit: Envoy's rate_limit_quota filter ignores it (it logs that the strategy is not yet supported and the bucket keeps whatever it held, no_assignment_behavior at first, so the budget is not applied); leave 'strategy' out or write token_bucket",
      `${path}.strategy`,
    );
  return readWord(item, 'strategy', STRATEGIES, 'INVALID_ALGORITHM', path, problems);
}

function readBudget(item: Item, path: string, problems: Problems): QuotaPolicy | null {
  const requestsPerUnit = readWhole(item, 'requests_per_unit', 0, path, problems);
  const unit = readUnit(item, path, problems);
  const strategy = readStrategy(item, path, problems);
  const maxTokens = readWhole(item, 'max_tokens', 1, path, problems);
  if (requestsPerUnit === null || unit === null || strategy === null || maxTokens === null)
    return null;
  if (requestsPerUnit === undefined || unit === undefined)
    return problems.add(
      'BAD_VALUE',
      "an item of quota_buckets needs 'requests_per_unit' and 'unit', or 'blanket_rule'",
      path,
    );
  if (requestsPerUnit === 0)
    return problems.add(
      'BAD_LIMIT',
      'a token bucket needs requests_per_unit above 0 (use blanket_rule: deny_all)',
      `${path}.requests_per_unit`,
    );
  return {
    kind: 'budget',
    strategy: 'token_bucket',
    requestsPerUnit,
    unit,
    maxTokens: maxTokens ?? requestsPerUnit,
  };
}

function readItem(
  raw: Json,
  path: string,
  where: { domain: string; source: string },
  problems: Problems,
): QuotaRule | null {
  if (!isMap(raw))
    return problems.add(
      'LIST_NOT_MAPS',
      `an item of quota_buckets must be a map, got ${shown(raw)}`,
      path,
    );
  const unknown = Object.keys(raw).find((key) => !ITEM_KEYS.has(key));
  if (unknown !== undefined)
    return problems.add(
      'UNKNOWN_KEY',
      `unknown key '${unknown}' in quota_buckets`,
      `${path}.${unknown}`,
    );
  const matchers = readBucket(raw.bucket, path, problems);
  const policy =
    raw.blanket_rule === undefined
      ? readBudget(raw, path, problems)
      : readBlanket(raw, path, problems);
  const assignmentTtlMs = readTtl(raw, path, problems);
  if (matchers === null || policy === null || assignmentTtlMs === null) return null;
  const id = matchers.map((m) => `${m.key}=${m.value}`).join(',');
  return { ...where, id, matchers, policy, assignmentTtlMs, path };
}

/**
 * Reads one `quota_buckets` list of `domain` from `source`. Every problem is collected; the
 * list is accepted only when there is none. Two items with the same bucket are refused: the
 * later could never govern anything.
 */
export function parseQuotaBuckets(
  value: Json,
  where: { readonly domain: string; readonly source: string },
  locate?: Locate,
): QuotaRulesResult {
  const problems = new Problems(locate);
  if (value === null || value === undefined) return { ok: true, rules: [] };
  if (!Array.isArray(value)) {
    problems.add(
      'BAD_VALUE',
      `'quota_buckets' must be a list, got ${shown(value)}`,
      QUOTA_LIST_KEY,
    );
    return { ok: false, problems: problems.list };
  }
  const rules: QuotaRule[] = [];
  const seen = new Map<string, string>();
  value.forEach((raw: Json, i) => {
    const path = `${QUOTA_LIST_KEY}[${i}]`;
    const rule = readItem(raw, path, where, problems);
    if (rule === null) return;
    const earlier = seen.get(rule.id);
    if (earlier !== undefined) {
      problems.add(
        'DUPLICATE_DESCRIPTOR',
        `bucket {${rule.id}} is already the bucket of ${earlier}`,
        `${path}.bucket`,
      );
      return;
    }
    seen.set(rule.id, path);
    rules.push(deepFreeze(rule));
  });
  if (problems.list.length > 0) return { ok: false, problems: problems.list };
  return { ok: true, rules };
}
