// A configuration file read quickly: the documents yaml-loader makes, from the quick YAML reader.
//
// Each field is read as yaml-loader reads it with YAML 1.1; a value it would refuse or warn
// about makes this reader give up, so that the full loader reports it in its own words. The
// positions it gives have a line and column but no path: compile() adds the path it walks,
// which is the path the full loader gives, as the quick reader has no aliases or merges.
import { MAX_UINT32 } from '../lib/uint32';
import type { ConfigDocument, DescriptorDoc, RateLimitPolicyDoc } from './document';
import { MAX_DESCRIPTOR_DEPTH } from './document';
import { entryOf, readFastYaml, type FastMap, type FastNode } from './fast-yaml';

/** YAML 1.1's plain scalars that mean null, true and false, as the `yaml` package tests them. */
const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const TRUE = /^(?:Y|y|[Yy]es|YES|[Tt]rue|TRUE|[Oo]n|ON)$/;
const FALSE = /^(?:N|n|[Nn]o|NO|[Ff]alse|FALSE|[Oo]ff|OFF)$/;
/** A decimal integer without sign or leading zero, the only kind read here. */
const DECIMAL = /^(?:0|[1-9][0-9]{0,9})$/;

/** Thrown to give up; caught at the entry. */
class GiveUp extends Error {}

function giveUp(): never {
  throw new GiveUp();
}

/** True for a missing value: nothing after the key, or a plain null. */
function isAbsent(node: FastNode | null | undefined): node is null | undefined {
  return node === null || node === undefined || (typeof node === 'string' && NULL.test(node));
}

function string(node: FastNode | null | undefined): string {
  if (isAbsent(node)) return '';
  if (typeof node === 'string') return node;
  return node.kind === 'quoted' ? node.text : giveUp();
}

function bool(node: FastNode | null | undefined): boolean {
  if (isAbsent(node)) return false;
  if (typeof node !== 'string') giveUp();
  if (TRUE.test(node)) return true;
  return FALSE.test(node) ? false : giveUp();
}

function uint32(node: FastNode | null | undefined): number {
  if (isAbsent(node)) return 0;
  if (typeof node !== 'string' || !DECIMAL.test(node)) giveUp();
  const value = Number(node);
  return value > MAX_UINT32 ? giveUp() : value;
}

/** One empty list for every absent list: a file of many rules has many. */
const NONE: readonly never[] = Object.freeze([]);

/** The maps of a list; an absent list is empty. */
function maps(node: FastNode | null | undefined): readonly FastMap[] {
  if (isAbsent(node)) return NONE;
  if (typeof node === 'string' || node.kind !== 'list') giveUp();
  return node.items.map((item) =>
    typeof item !== 'string' && item.kind === 'map' ? item : giveUp(),
  );
}

/** `read` of each map, the shared empty list for none. */
function listOf<T>(list: readonly FastMap[], read: (map: FastMap) => T): readonly T[] {
  return list.length === 0 ? NONE : list.map(read);
}

function asMap(node: FastNode): FastMap {
  return typeof node !== 'string' && node.kind === 'map' ? node : giveUp();
}

/** Gives up on a key that the map may not hold. */
function onlyKeys(map: FastMap, keys: ReadonlySet<string>): void {
  const entries = map.entries;
  for (let i = 0; i < entries.length; i += 2) if (!keys.has(entries[i] as string)) giveUp();
}

const POLICY_KEYS = new Set([
  'unit',
  'requests_per_unit',
  'unlimited',
  'name',
  'replaces',
  'algorithm',
  'burst',
]);
const ITEM_KEYS = new Set([...POLICY_KEYS].filter((k) => k !== 'unlimited' && k !== 'replaces'));

function limit(map: FastMap, keys: ReadonlySet<string>): RateLimitPolicyDoc {
  onlyKeys(map, keys);
  const get = (key: string): FastNode | null | undefined => entryOf(map, key);
  const burst = get('burst');
  const algorithm = string(get('algorithm'));
  const unit = string(get('unit'));
  const name = string(get('name'));
  return {
    unit: unit === '' ? undefined : unit,
    requestsPerUnit: uint32(get('requests_per_unit')),
    unlimited: bool(get('unlimited')),
    name: name === '' ? undefined : name,
    replaces: listOf(maps(get('replaces')), (r) => {
      onlyKeys(r, NAME_ONLY);
      return string(entryOf(r, 'name'));
    }),
    algorithm: algorithm === '' ? undefined : algorithm,
    // A burst key without a value reads as 0, as the full loader reads it.
    burst: burst !== undefined ? uint32(burst) : undefined,
    position: { line: map.line, column: map.column },
  };
}
const NAME_ONLY = new Set(['name']);

const DESCRIPTOR_KEYS = new Set([
  'key',
  'value',
  'rate_limit',
  'rate_limits',
  'descriptors',
  'shadow_mode',
  'quota_mode',
  'detailed_metric',
  'value_to_metric',
  'share_threshold',
]);

/** A descriptor of the list at `depth` (1 for the top list). */
function descriptor(map: FastMap, depth: number): DescriptorDoc {
  onlyKeys(map, DESCRIPTOR_KEYS);
  const get = (key: string): FastNode | null | undefined => entryOf(map, key);
  const children = get('descriptors');
  // The full loader refuses a descriptors key below MAX_DESCRIPTOR_DEPTH lists, even empty.
  if (children !== undefined && depth >= MAX_DESCRIPTOR_DEPTH) giveUp();
  const policy = get('rate_limit');
  const value = string(get('value'));
  return {
    key: string(get('key')),
    value: value === '' ? undefined : value,
    rateLimit: isAbsent(policy) ? undefined : limit(asMap(policy), POLICY_KEYS),
    rateLimits: listOf(maps(get('rate_limits')), (m) => limit(m, ITEM_KEYS)),
    descriptors: descriptors(children, depth + 1),
    shadowMode: bool(get('shadow_mode')),
    quotaMode: bool(get('quota_mode')),
    detailedMetric: bool(get('detailed_metric')),
    valueToMetric: bool(get('value_to_metric')),
    shareThreshold: bool(get('share_threshold')),
    metadata: undefined,
    position: { line: map.line, column: map.column },
  };
}

function descriptors(node: FastNode | null | undefined, depth: number): readonly DescriptorDoc[] {
  const list = maps(node);
  return list.length === 0 ? NONE : list.map((m) => descriptor(m, depth));
}

const TOP_KEYS = new Set(['domain', 'descriptors']);

/**
 * The document of a configuration file, or undefined when the quick reader does not handle
 * it (the full loader then reads it, and reports whatever is wrong).
 */
export function readFastConfig(source: string, text: string): ConfigDocument | undefined {
  const top = readFastYaml(text);
  if (top === undefined) return undefined;
  try {
    onlyKeys(top, TOP_KEYS);
    return {
      source,
      domain: string(entryOf(top, 'domain')),
      descriptors: descriptors(entryOf(top, 'descriptors'), 1),
      warnings: [],
    };
  } catch (err: unknown) {
    if (err instanceof GiveUp) return undefined;
    throw err;
  }
}
