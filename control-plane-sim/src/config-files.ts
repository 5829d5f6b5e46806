// Rate limit configuration files (the service's own YAML format) turned into RateLimitConfig resources.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { toStruct, type JsonObject } from '../../src/lib/struct';
import { encodeConfig, TYPE_URL } from './proto';

/** A resource as the ADS response carries it. */
export interface Resource {
  readonly name: string;
  readonly typeUrl: string;
  readonly value: Uint8Array;
}

const UNITS = new Set(['SECOND', 'MINUTE', 'HOUR', 'DAY', 'WEEK', 'MONTH', 'YEAR']);

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : '';
}

const ALGORITHMS = new Set(['FIXED_WINDOW', 'SLIDING_WINDOW', 'TOKEN_BUCKET']);

function limit(r: Obj): Obj {
  const unit = text(r.unit).toUpperCase();
  const algorithm = text(r.algorithm).toUpperCase();
  return {
    // A unit the protocol cannot carry goes as UNKNOWN; the service refuses it (a NACK to watch).
    unit: UNITS.has(unit) ? unit : 'UNKNOWN',
    requestsPerUnit: typeof r.requests_per_unit === 'number' ? r.requests_per_unit : 0,
    unlimited: r.unlimited === true,
    name: text(r.name),
    replaces: Array.isArray(r.replaces)
      ? r.replaces.map((x: unknown) => ({ name: isObj(x) ? text(x.name) : '' }))
      : [],
    // An unknown algorithm goes as the enum's default, fixed_window: the protocol has no other.
    algorithm: ALGORITHMS.has(algorithm) ? algorithm : 'FIXED_WINDOW',
    burst: typeof r.burst === 'number' ? r.burst : 0,
  };
}

function descriptor(d: unknown): Obj {
  if (!isObj(d)) return {};
  const out: Obj = { key: text(d.key), value: text(d.value) };
  if (isObj(d.rate_limit)) out.rateLimit = limit(d.rate_limit);
  if (Array.isArray(d.rate_limits)) out.rateLimits = d.rate_limits.filter(isObj).map(limit);
  if (Array.isArray(d.descriptors)) out.descriptors = d.descriptors.map(descriptor);
  for (const [yamlKey, protoKey] of [
    ['shadow_mode', 'shadowMode'],
    ['detailed_metric', 'detailedMetric'],
    ['quota_mode', 'quotaMode'],
    ['value_to_metric', 'valueToMetric'],
    ['share_threshold', 'shareThreshold'],
  ] as const) {
    if (d[yamlKey] === true) out[protoKey] = true;
  }
  // YAML's core schema, which parse() reads, yields only JSON values.
  if (isObj(d.metadata)) out.metadata = toStruct(d.metadata as JsonObject);
  return out;
}

/** One resource from one file's text; the resource is named after the file. */
export function resourceFromYaml(name: string, yamlText: string): Resource {
  const doc: unknown = parse(yamlText);
  const root = isObj(doc) ? doc : {};
  const config = {
    name,
    domain: text(root.domain),
    descriptors: Array.isArray(root.descriptors) ? root.descriptors.map(descriptor) : [],
  };
  return { name, typeUrl: TYPE_URL, value: encodeConfig(config) };
}

/**
 * The resource last made of each file, with the text it was made from: a file read again
 * unchanged (a republish) is not parsed again, which for a file of 100,000 rules takes seconds.
 */
const madeFrom = new Map<string, { readonly text: string; readonly resource: Resource }>();

/** Every *.yaml / *.yml of a directory, sorted by name. */
export function readConfigDirectory(dir: string): Resource[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/i.test(f) && !f.startsWith('.'))
    .sort()
    .map((f) => {
      const file = path.join(dir, f);
      const text = readFileSync(file, 'utf8');
      const known = madeFrom.get(file);
      if (known?.text === text) return known.resource;
      const resource = resourceFromYaml(f.replace(/\.ya?ml$/i, ''), text);
      madeFrom.set(file, { text, resource });
      return resource;
    });
}
