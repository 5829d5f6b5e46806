// A file's quota_buckets turned into the rules of a QuotaRules resource (this project's own type):
// what the protocol can carry is sent as written, for the service to check; the rest is refused.
import { parseGoDurationMs } from '../../src/lib/durations';

type Obj = Record<string, unknown>;
type Path = readonly (string | number)[];

/** Where refusals come from: an error at a YAML node, naming the file, line and column. */
export interface RefusesAt {
  failAt(at: Path, message: string): Error;
}

const KEYS = [
  'bucket',
  'requests_per_unit',
  'unit',
  'strategy',
  'max_tokens',
  'assignment_ttl',
  'blanket_rule',
];
/** The protocol's words for each enum field; WEEK is carried, for the service to refuse. */
const WORDS: Readonly<Record<string, readonly string[]>> = {
  unit: ['second', 'minute', 'hour', 'day', 'month', 'year', 'week'],
  strategy: ['requests_per_time_unit', 'token_bucket'],
  blanket_rule: ['allow_all', 'deny_all'],
};
const MAX_UINT32 = 4_294_967_295;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function scalar(value: unknown): string | undefined {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : undefined;
}

/** Reads one item; `refuse` names it, its bucket and the key at fault. */
class ItemReading {
  constructor(
    private readonly item: Obj,
    private readonly at: Path,
    private readonly file: RefusesAt,
  ) {}

  refuse(key: string | undefined, message: string): Error {
    const where = key === undefined ? this.at : [...this.at, key];
    const path = where.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
    const bucket = isObj(this.item.bucket)
      ? Object.entries(this.item.bucket)
          .map(([k, v]) => `${k}=${scalar(v) ?? ''}`)
          .join(',')
      : '';
    return this.file.failAt(where, `quota bucket {${bucket}} (at ${path.slice(1)}): ${message}`);
  }

  bucket(): Obj {
    const raw = this.item.bucket;
    if (raw === undefined) return {};
    if (!isObj(raw)) throw this.refuse('bucket', 'bucket must be a map of keys and values');
    const out: Obj = {};
    for (const [key, value] of Object.entries(raw)) {
      const text = scalar(value);
      if (text === undefined) throw this.refuse('bucket', `bucket key '${key}' needs a value`);
      out[key] = text;
    }
    return out;
  }

  /** A wrapper for a whole number the protocol's uint32 holds. */
  whole(key: string): Obj | undefined {
    const raw = this.item[key];
    if (raw === undefined) return undefined;
    if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0 && raw <= MAX_UINT32)
      return { value: raw };
    throw this.refuse(key, `${key} must be a whole number from 0 to ${MAX_UINT32}`);
  }

  word(key: string): string | undefined {
    const raw = this.item[key];
    if (raw === undefined) return undefined;
    const words = WORDS[key] ?? [];
    const text = typeof raw === 'string' ? raw.toLowerCase() : undefined;
    if (text !== undefined && words.includes(text)) return text.toUpperCase();
    throw this.refuse(
      key,
      `unknown ${key} ${JSON.stringify(scalar(raw) ?? raw)}; accepted: ${words.join(', ')}`,
    );
  }

  duration(key: string): Obj | undefined {
    const raw = this.item[key];
    if (raw === undefined) return undefined;
    const ms = typeof raw === 'string' ? parseGoDurationMs(raw) : undefined;
    if (ms === undefined)
      throw this.refuse(
        key,
        `${key} must be a duration such as 30s or 2m, got ${JSON.stringify(raw)}`,
      );
    const seconds = Math.trunc(ms / 1000);
    return { seconds, nanos: Math.round((ms - seconds * 1000) * 1e6) };
  }
}

function rule(item: unknown, at: Path, file: RefusesAt): Obj {
  if (!isObj(item)) throw file.failAt(at, `quota_buckets[${String(at[1])}] must be a map`);
  const reading = new ItemReading(item, at, file);
  const unknown = Object.keys(item).find((key) => !KEYS.includes(key));
  if (unknown !== undefined)
    throw reading.refuse(unknown, `unknown key '${unknown}'; accepted: ${KEYS.join(', ')}`);
  const fields: [string, unknown][] = [
    ['bucket', reading.bucket()],
    ['requestsPerUnit', reading.whole('requests_per_unit')],
    ['unit', reading.word('unit')],
    ['strategy', reading.word('strategy')],
    ['maxTokens', reading.whole('max_tokens')],
    ['assignmentTtl', reading.duration('assignment_ttl')],
    ['blanketRule', reading.word('blanket_rule')],
  ];
  // An absent key is a field left unset, as the service reads a file without it.
  return Object.fromEntries(fields.filter(([, value]) => value !== undefined));
}

/** The messages of a file's quota_buckets (the value under the key, if any). */
export function quotaBuckets(list: unknown, file: RefusesAt): Obj[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw file.failAt(['quota_buckets'], 'quota_buckets must be a list');
  return list.map((item: unknown, i) => rule(item, ['quota_buckets', i], file));
}
