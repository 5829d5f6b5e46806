// Rate limit configuration files (the service's own YAML format) turned into RateLimitConfig resources.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import { toStruct, type JsonObject } from '../../src/lib/struct';
import { encodeConfig, encodeQuotaRules, TYPE_URL } from './proto';
import { quotaBuckets } from './quota-buckets';

/** A resource as the ADS response carries it. */
export interface Resource {
  readonly name: string;
  readonly typeUrl: string;
  readonly value: Uint8Array;
  /** The file's quota_buckets as a QuotaRules of the same name; absent without any. */
  readonly quota?: Uint8Array;
}

const UNITS = new Set(['SECOND', 'MINUTE', 'HOUR', 'DAY', 'WEEK', 'MONTH', 'YEAR']);
const ALGORITHMS = ['FIXED_WINDOW', 'SLIDING_WINDOW', 'TOKEN_BUCKET'];

type Obj = Record<string, unknown>;
type Path = readonly (string | number)[];

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : '';
}

/** A file the simulator will not serve, named with the line and column of the problem. */
export class ConfigFileError extends Error {}

/** One file being read: its name for messages, and where each YAML node sits. */
class FileReading {
  private readonly lines = new LineCounter();
  readonly doc: Document;

  constructor(
    readonly file: string,
    yamlText: string,
  ) {
    this.doc = parseDocument(yamlText, { lineCounter: this.lines, prettyErrors: false });
    const [error] = this.doc.errors;
    if (error !== undefined) throw this.fail(error.pos[0], error.message);
  }

  /** An error naming the file and the line and column of `offset`. */
  fail(offset: number, message: string): ConfigFileError {
    const { line, col } = this.lines.linePos(offset);
    return new ConfigFileError(`${this.file}:${line}:${col}: ${message}`);
  }

  /** The rule at `at` as its keys read from the top, `tier=free > user`. */
  ruleName(at: Path): string {
    const names: string[] = [];
    for (let i = 0; i < at.length; i++) {
      if (at[i] !== 'descriptors' || typeof at[i + 1] !== 'number') continue;
      const rule = at.slice(0, i + 2);
      const key = text(this.doc.getIn([...rule, 'key']));
      const value = text(this.doc.getIn([...rule, 'value']));
      names.push(value === '' ? key : `${key}=${value}`);
    }
    return names.join(' > ');
  }

  /** An error at the YAML node of `at` (or the file's start when it has none). */
  failAt(at: Path, message: string): ConfigFileError {
    const node: unknown = this.doc.getIn(at, true);
    const range = (node as { range?: [number, number, number] } | undefined)?.range;
    return this.fail(range?.[0] ?? 0, message);
  }

  /** An error at the key `key` of the map at `at` (the whole map's place if not found). */
  failAtKey(at: Path, key: string, message: string): ConfigFileError {
    const map: unknown = at.length === 0 ? this.doc.contents : this.doc.getIn(at, true);
    if (!isMap(map)) return this.failAt(at, message);
    const pair = map.items.find((item) => isScalar(item.key) && item.key.value === key);
    const range = (pair?.key as { range?: [number, number, number] } | undefined)?.range;
    return range === undefined ? this.failAt(at, message) : this.fail(range[0], message);
  }
}

/** `descriptors[0].descriptors[1].rate_limit`, as the service's loader names a place. */
function yamlPath(at: Path): string {
  return at.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/**
 * The algorithm the rule names, or undefined when it names none: the field is then left out,
 * so the service reads its default, exactly as from a file without the key.
 */
function algorithmOf(r: Obj, at: Path, reading: FileReading): string | undefined {
  if (r.algorithm === undefined || r.algorithm === null) return undefined;
  const algorithm = text(r.algorithm).toUpperCase();
  if (ALGORITHMS.includes(algorithm)) return algorithm;
  // The protocol has no word for an unknown algorithm: sending its default would change the rule.
  throw reading.failAt(
    [...at, 'algorithm'],
    `rule ${reading.ruleName(at)} (at ${yamlPath(at)}): unknown algorithm ${JSON.stringify(text(r.algorithm))}; accepted: ${ALGORITHMS.map((a) => a.toLowerCase()).join(', ')}`,
  );
}

const LIMIT_KEYS = [
  'unit',
  'requests_per_unit',
  'unlimited',
  'name',
  'replaces',
  'algorithm',
  'burst',
];
const FLAGS = [
  ['shadow_mode', 'shadowMode'],
  ['detailed_metric', 'detailedMetric'],
  ['quota_mode', 'quotaMode'],
  ['value_to_metric', 'valueToMetric'],
  ['share_threshold', 'shareThreshold'],
] as const;
const DESCRIPTOR_KEYS = [
  'key',
  'value',
  'rate_limit',
  'rate_limits',
  'descriptors',
  'metadata',
  ...FLAGS.map(([yamlKey]) => yamlKey),
];
const TOP_KEYS = ['domain', 'descriptors', 'quota_buckets'];

/**
 * Refuses a key the resource has no field for, naming where: dropped silently, a misspelt key
 * (`request_per_unit`) would reach the service as a rule without it, and the operator would
 * look for the mistake in the wrong place.
 */
function refuseUnknownKeys(
  obj: Obj,
  known: readonly string[],
  at: Path,
  reading: FileReading,
): void {
  for (const key of Object.keys(obj)) {
    if (known.includes(key)) continue;
    const where = at.length === 0 ? 'at the top level' : `at ${yamlPath(at)}`;
    throw reading.failAtKey(
      at,
      key,
      `unknown key '${key}' ${where}; accepted: ${known.join(', ')}`,
    );
  }
}

/**
 * The unit the rule names. A rule without one goes as UNKNOWN, which the service refuses (the
 * NACK the admin page's bad resource shows). A unit the protocol has no word for is refused
 * here, naming it, the file, line and column: as UNKNOWN its NACK would name none of them.
 */
function unitOf(r: Obj, at: Path, reading: FileReading): string {
  if (r.unit === undefined || r.unit === null) return 'UNKNOWN';
  const unit = text(r.unit).toUpperCase();
  if (UNITS.has(unit)) return unit;
  throw reading.failAt(
    [...at, 'unit'],
    `rule ${reading.ruleName(at)} (at ${yamlPath(at)}): unknown unit ${JSON.stringify(text(r.unit))}; accepted: ${[...UNITS].map((u) => u.toLowerCase()).join(', ')}`,
  );
}

function limit(r: Obj, at: Path, reading: FileReading): Obj {
  refuseUnknownKeys(r, LIMIT_KEYS, at, reading);
  const unit = unitOf(r, at, reading);
  const algorithm = algorithmOf(r, at, reading);
  return {
    unit,
    requestsPerUnit: typeof r.requests_per_unit === 'number' ? r.requests_per_unit : 0,
    unlimited: r.unlimited === true,
    name: text(r.name),
    replaces: Array.isArray(r.replaces)
      ? r.replaces.map((x: unknown) => ({ name: isObj(x) ? text(x.name) : '' }))
      : [],
    ...(algorithm === undefined ? {} : { algorithm }),
    burst: typeof r.burst === 'number' ? r.burst : 0,
  };
}

function descriptor(d: unknown, at: Path, reading: FileReading): Obj {
  if (!isObj(d)) return {};
  refuseUnknownKeys(d, DESCRIPTOR_KEYS, at, reading);
  const out: Obj = { key: text(d.key), value: text(d.value) };
  if (isObj(d.rate_limit)) out.rateLimit = limit(d.rate_limit, [...at, 'rate_limit'], reading);
  if (Array.isArray(d.rate_limits)) {
    const items = d.rate_limits as unknown[];
    out.rateLimits = items.flatMap((item, i) =>
      isObj(item) ? [limit(item, [...at, 'rate_limits', i], reading)] : [],
    );
  }
  if (Array.isArray(d.descriptors)) out.descriptors = descriptors(d.descriptors, at, reading);
  for (const [yamlKey, protoKey] of FLAGS) if (d[yamlKey] === true) out[protoKey] = true;
  // YAML's core schema, which the parser reads, yields only JSON values.
  if (isObj(d.metadata)) out.metadata = toStruct(d.metadata as JsonObject);
  return out;
}

function descriptors(list: readonly unknown[], at: Path, reading: FileReading): Obj[] {
  return list.map((d, i) => descriptor(d, [...at, 'descriptors', i], reading));
}

/**
 * One resource from one file's text; the resource is named after the file. `file` names it in
 * errors (a YAML error, an unknown algorithm, a quota bucket the protocol cannot carry), which
 * carry the line and column.
 */
export function resourceFromYaml(name: string, yamlText: string, file = name): Resource {
  const reading = new FileReading(file, yamlText);
  const doc: unknown = reading.doc.toJS();
  const root = isObj(doc) ? doc : {};
  refuseUnknownKeys(root, TOP_KEYS, [], reading);
  const domain = text(root.domain);
  const config = {
    name,
    domain,
    descriptors: Array.isArray(root.descriptors) ? descriptors(root.descriptors, [], reading) : [],
  };
  const rules = quotaBuckets(root.quota_buckets, reading);
  const resource = { name, typeUrl: TYPE_URL, value: encodeConfig(config) };
  // The rules go as this project's own type, never in RateLimitConfig's deprecated field.
  if (rules.length === 0) return resource;
  return { ...resource, quota: encodeQuotaRules({ name, domain, quotaBuckets: rules }) };
}

/**
 * The resource last made of each file, with the text it was made from: a file read again
 * unchanged (a republish) is not parsed again, which for a file of 100,000 rules takes seconds.
 */
const madeFrom = new Map<string, { readonly text: string; readonly resource: Resource }>();

/** Every *.yaml / *.yml of a directory, sorted by name; the first bad file is thrown, named. */
export function readConfigDirectory(dir: string): Resource[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/i.test(f) && !f.startsWith('.'))
    .sort()
    .map((f) => {
      const file = path.join(dir, f);
      const text = readFileSync(file, 'utf8');
      const known = madeFrom.get(file);
      if (known?.text === text) return known.resource;
      const resource = resourceFromYaml(f.replace(/\.ya?ml$/i, ''), text, file);
      madeFrom.set(file, { text, resource });
      return resource;
    });
}
