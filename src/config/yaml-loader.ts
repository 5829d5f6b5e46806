// The configuration file format: which keys mean what, where; refusals exactly where the reference's.
import { isMap, LineCounter, parseDocument } from 'yaml';
import {
  DESCRIPTOR_FILE_KEYS,
  type ConfigDocument,
  type DescriptorDoc,
  type JsonObject,
  type RateLimitPolicyDoc,
} from './document';
import { ConfigError } from './errors';
import { readFastConfig } from './fast-config';
import { readQuotaBuckets } from './quota-buckets';
import { ExpansionExceeded, YamlReader, type Entry, type YamlNode } from './yaml-reader';

/** The descriptor format's keys, and the RLQS rules' list, whose keys quota-buckets.ts reads. */
const VALID_KEYS: ReadonlySet<string> = new Set([...DESCRIPTOR_FILE_KEYS, 'quota_buckets']);

/** Reads one field into a draft; returns the refusal when its value is wrong. */
type FieldReader<D> = (reader: YamlReader, field: Entry, draft: D) => ConfigError | undefined;

/** The fields a map may hold, and where it is (for the warning about any other known key). */
interface Fields<D> {
  readonly where: string;
  readonly readers: ReadonlyMap<string, FieldReader<D>>;
}

/** Hands a read value to `assignTo`, or passes the refusal on. */
function assign<T>(value: T | ConfigError, assignTo: (value: T) => void): ConfigError | undefined {
  if (value instanceof ConfigError) return value;
  assignTo(value);
  return undefined;
}

/** Reads the fields of the map `node` into `draft`, stopping at the first refusal. */
function readFields<D>(
  reader: YamlReader,
  node: YamlNode | null,
  fields: Fields<D>,
  draft: D,
): ConfigError | undefined {
  const entries = reader.entries(node);
  if (entries instanceof ConfigError) return entries;
  for (const field of entries) {
    const read = fields.readers.get(field.key);
    if (read === undefined) {
      reader.misplaced(field, fields.where);
      continue;
    }
    const refusal = read(reader, field, draft);
    if (refusal !== undefined) return refusal;
  }
  return undefined;
}

/** Reads every map of a list with `read`, stopping at the first refusal. */
function readList<T>(
  reader: YamlReader,
  entry: Entry,
  read: (node: YamlNode | null) => T | ConfigError,
): T[] | ConfigError {
  const nodes = reader.listOfMaps(entry);
  if (nodes instanceof ConfigError) return nodes;
  const out: T[] = [];
  for (const node of nodes) {
    const item = read(node);
    if (item instanceof ConfigError) return item;
    out.push(item);
  }
  return out;
}

type PolicyDraft = { -readonly [K in keyof RateLimitPolicyDoc]: RateLimitPolicyDoc[K] };

const REPLACES_ENTRY: Fields<{ name: string }> = {
  where: 'in a replaces entry',
  readers: new Map([['name', (r, f, d) => assign(r.string(f), (v) => (d.name = v))]]),
};

const POLICY: Fields<PolicyDraft> = {
  where: 'in rate_limit',
  readers: new Map<string, FieldReader<PolicyDraft>>([
    ['unit', (r, f, d) => assign(r.string(f), (v) => (d.unit = v))],
    ['requests_per_unit', (r, f, d) => assign(r.uint32(f), (v) => (d.requestsPerUnit = v))],
    ['unlimited', (r, f, d) => assign(r.bool(f), (v) => (d.unlimited = v))],
    ['name', (r, f, d) => assign(r.string(f), (v) => (d.name = v))],
    ['replaces', (r, f, d) => assign(readReplaces(r, f), (v) => (d.replaces = v))],
    ['algorithm', (r, f, d) => assign(r.string(f), (v) => (d.algorithm = v))],
    ['burst', (r, f, d) => assign(r.uint32(f), (v) => (d.burst = v))],
  ]),
};

/** An item of `rate_limits`: a limit of its own, without `unlimited` or `replaces`. */
const LIMIT_ITEM: Fields<PolicyDraft> = {
  where: 'in an item of rate_limits',
  readers: new Map(
    [...POLICY.readers].filter(([key]) => key !== 'unlimited' && key !== 'replaces'),
  ),
};

/** The names a rule replaces, one map `{ name }` each. */
function readReplaces(reader: YamlReader, entry: Entry): string[] | ConfigError {
  return readList(reader, entry, (node) => {
    const replaced = { name: '' };
    return readFields(reader, node, REPLACES_ENTRY, replaced) ?? replaced.name;
  });
}

function readLimit(
  reader: YamlReader,
  node: YamlNode | null,
  fields: Fields<PolicyDraft>,
): RateLimitPolicyDoc | ConfigError {
  const draft: PolicyDraft = {
    unit: undefined,
    requestsPerUnit: 0,
    unlimited: false,
    name: undefined,
    replaces: [],
    algorithm: undefined,
    burst: undefined,
    position: reader.position(node),
  };
  const refusal = readFields(reader, node, fields, draft);
  if (refusal !== undefined) return refusal;
  return {
    ...draft,
    unit: draft.unit === '' ? undefined : draft.unit,
    name: draft.name === '' ? undefined : draft.name,
    algorithm: draft.algorithm === '' ? undefined : draft.algorithm,
  };
}

function readPolicy(
  reader: YamlReader,
  entry: Entry,
): RateLimitPolicyDoc | undefined | ConfigError {
  if (entry.node === null) return undefined;
  return readLimit(reader, entry.node, POLICY);
}

/** `rate_limits`: a list of limits beside (or instead of) `rate_limit`. */
function readLimits(reader: YamlReader, entry: Entry): RateLimitPolicyDoc[] | ConfigError {
  return readList(reader, entry, (node) => readLimit(reader, node, LIMIT_ITEM));
}

/** Metadata: any map, kept as JSON; an empty one counts as none. */
function readMetadata(reader: YamlReader, entry: Entry): JsonObject | undefined | ConfigError {
  if (entry.node !== null && !isMap(entry.node))
    return reader.refusal(
      'BAD_VALUE',
      `error parsing metadata: 'metadata' must be a map`,
      entry.node,
    );
  const json = reader.json(entry.node);
  return json !== null &&
    typeof json === 'object' &&
    !Array.isArray(json) &&
    Object.keys(json).length > 0
    ? json
    : undefined;
}

type DescriptorDraft = { -readonly [K in keyof DescriptorDoc]: DescriptorDoc[K] };
type DescriptorFlag =
  'shadowMode' | 'quotaMode' | 'detailedMetric' | 'valueToMetric' | 'shareThreshold';

function flag(name: DescriptorFlag): FieldReader<DescriptorDraft> {
  return (r, f, d) => assign(r.bool(f), (v) => (d[name] = v));
}

const DESCRIPTOR: Fields<DescriptorDraft> = {
  where: 'in a descriptor',
  readers: new Map<string, FieldReader<DescriptorDraft>>([
    ['key', (r, f, d) => assign(r.string(f), (v) => (d.key = v))],
    ['value', (r, f, d) => assign(r.string(f), (v) => (d.value = v))],
    ['rate_limit', (r, f, d) => assign(readPolicy(r, f), (v) => (d.rateLimit = v))],
    ['rate_limits', (r, f, d) => assign(readLimits(r, f), (v) => (d.rateLimits = v))],
    ['descriptors', (r, f, d) => assign(readDescriptors(r, f), (v) => (d.descriptors = v))],
    ['shadow_mode', flag('shadowMode')],
    ['quota_mode', flag('quotaMode')],
    ['detailed_metric', flag('detailedMetric')],
    ['value_to_metric', flag('valueToMetric')],
    ['share_threshold', flag('shareThreshold')],
    ['metadata', (r, f, d) => assign(readMetadata(r, f), (v) => (d.metadata = v))],
  ]),
};

function readDescriptor(reader: YamlReader, node: YamlNode | null): DescriptorDoc | ConfigError {
  const draft: DescriptorDraft = {
    key: '',
    value: undefined,
    rateLimit: undefined,
    rateLimits: [],
    descriptors: [],
    shadowMode: false,
    quotaMode: false,
    detailedMetric: false,
    valueToMetric: false,
    shareThreshold: false,
    metadata: undefined,
    position: reader.position(node),
  };
  const refusal = readFields(reader, node, DESCRIPTOR, draft);
  if (refusal !== undefined) return refusal;
  return { ...draft, value: draft.value === '' ? undefined : draft.value };
}

function readDescriptors(reader: YamlReader, entry: Entry): DescriptorDoc[] | ConfigError {
  return reader.nested(entry.node, () =>
    readList(reader, entry, (node) => readDescriptor(reader, node)),
  );
}

type Top = { domain: string; descriptors: DescriptorDoc[]; quota?: YamlNode | null };

const TOP: Fields<Top> = {
  where: 'at the top level',
  readers: new Map<string, FieldReader<Top>>([
    ['domain', (r, f, d) => assign(r.string(f), (v) => (d.domain = v))],
    ['descriptors', (r, f, d) => assign(readDescriptors(r, f), (v) => (d.descriptors = v))],
    // Read once the domain is known (it may come later in the file).
    ['quota_buckets', (_r, f, d) => assign(f.node, (v) => (d.quota = v))],
  ]),
};

/**
 * Parses one configuration file. Returns the document, or the error that refuses the file
 * (the file name and the reason are in its message): the first problem, as the reference
 * stops at it; compile() then reports the problems of every file that parsed.
 */
export function parseConfigFile(source: string, text: string): ConfigDocument | ConfigError {
  // Plain generated files are read quickly; the full parser reads the rest, and every refusal.
  return readFastConfig(source, text) ?? parseWithYaml(source, text);
}

/** parseConfigFile with the full YAML parser alone. */
export function parseWithYaml(source: string, text: string): ConfigDocument | ConfigError {
  try {
    return parseText(source, text);
  } catch (err: unknown) {
    if (err instanceof ExpansionExceeded) return err.refusal;
    // The YAML parser recurses on nesting; a file nested deep enough exhausts the stack.
    if (err instanceof RangeError)
      return new ConfigError(
        'TOO_DEEP',
        source,
        'error loading config file: the YAML nests too deeply to parse',
      );
    throw err;
  }
}

/**
 * The parser places an indentation error at the start of the line's indentation: the place an
 * operator looks for is the item it indents, the first character after the spaces and tabs.
 */
function pastIndentation(text: string, offset: number): number {
  let at = offset;
  while (at < text.length && (text[at] === ' ' || text[at] === '\t')) at++;
  return at < text.length && text[at] !== '\n' && text[at] !== '\r' ? at : offset;
}

function parseText(source: string, text: string): ConfigDocument | ConfigError {
  const lines = new LineCounter();
  const doc = parseDocument(text, {
    version: '1.1',
    lineCounter: lines,
    uniqueKeys: true,
    prettyErrors: false,
  });
  const first = doc.errors[0];
  if (first !== undefined) {
    const pos = lines.linePos(pastIndentation(text, first.pos[0]));
    // The parser reports exhausting its stack on deep nesting as a parse error of its own.
    const isTooDeep = first.message.includes('Maximum call stack size exceeded');
    return new ConfigError(
      isTooDeep ? 'TOO_DEEP' : 'YAML_PARSE',
      source,
      `error loading config file: ${first.message.split('\n')[0] ?? first.message}`,
      { line: pos.line, column: pos.col },
    );
  }
  const reader = new YamlReader(source, doc, lines, VALID_KEYS, text.length);
  const root = reader.resolve(doc.contents);
  if (root !== null && !isMap(root)) {
    return reader.refusal(
      'NOT_A_MAP',
      'error loading config file: the document must be a map with domain and descriptors',
      root,
    );
  }
  const top: Top = { domain: '', descriptors: [] };
  const refusal = readFields(reader, root, TOP, top);
  if (refusal !== undefined) return refusal;
  const { quota, ...rest } = top;
  const quotaBuckets = readQuotaBuckets(reader, quota ?? null, { domain: top.domain, source });
  if (quotaBuckets instanceof ConfigError) return quotaBuckets;
  return {
    source,
    ...rest,
    warnings: reader.warnings,
    ...(quota === undefined ? {} : { quotaBuckets }),
  };
}
