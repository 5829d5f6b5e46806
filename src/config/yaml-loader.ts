// Parses and type-checks one configuration file, refusing it exactly where the reference does.
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  type Document,
  type Node as YamlNode,
  type Scalar,
} from 'yaml';
import type {
  ConfigDocument,
  DescriptorDoc,
  JsonObject,
  JsonValue,
  RateLimitPolicyDoc,
} from './document';
import { ConfigError, type SourcePosition } from './errors';

const VALID_KEYS = new Set([
  'domain',
  'key',
  'value',
  'descriptors',
  'rate_limit',
  'unit',
  'requests_per_unit',
  'unlimited',
  'shadow_mode',
  'quota_mode',
  'name',
  'replaces',
  'detailed_metric',
  'value_to_metric',
  'share_threshold',
  'metadata',
]);

const MAX_UINT32 = 4294967295;

/** The text of a scalar as written in the file. */
function scalarText(node: Scalar): string {
  if (typeof node.source === 'string') return node.source;
  const v = node.value;
  return typeof v === 'string' ||
    typeof v === 'number' ||
    typeof v === 'boolean' ||
    typeof v === 'bigint'
    ? String(v)
    : '';
}

/** Thrown inside the loader to stop at the first problem of a file, as the reference does. */
class Refusal extends Error {
  constructor(readonly error: ConfigError) {
    super(error.message);
  }
}

interface Entry {
  readonly key: string;
  readonly node: YamlNode | null;
  readonly position: SourcePosition | undefined;
}

class FileReader {
  readonly warnings: string[] = [];

  constructor(
    private readonly source: string,
    private readonly doc: Document,
    private readonly lines: LineCounter,
  ) {}

  /**
   * The reference accepts a known key in the wrong place and ignores it; so do we, so that its
   * files load unchanged, but we say so, because it is nearly always a mistake.
   */
  misplaced(entry: Entry, where: string): void {
    const at =
      entry.position === undefined
        ? ''
        : ` (line ${entry.position.line}, column ${entry.position.column})`;
    this.warnings.push(
      `${this.source}: key '${entry.key}' has no meaning ${where} and is ignored${at}`,
    );
  }

  refuse(code: ConfigError['code'], reason: string, node?: YamlNode | null): never {
    throw new Refusal(new ConfigError(code, this.source, reason, this.position(node)));
  }

  position(node: YamlNode | null | undefined): SourcePosition | undefined {
    const offset = node?.range?.[0];
    if (offset === undefined) return undefined;
    const pos = this.lines.linePos(offset);
    return { line: pos.line, column: pos.col };
  }

  resolve(node: unknown): YamlNode | null {
    if (node === null || node === undefined) return null;
    if (isAlias(node)) return (node.resolve(this.doc) as YamlNode | undefined) ?? null;
    return node as YamlNode;
  }

  private describe(node: YamlNode | null): string {
    if (node === null) return 'nothing';
    if (isMap(node)) return 'a map';
    if (isSeq(node)) return 'a list';
    if (isScalar(node)) return JSON.stringify(scalarText(node));
    return 'an unknown node';
  }

  /** The entries of a map, with keys checked against the accepted keys. */
  entries(node: YamlNode | null): Entry[] {
    if (node === null) return [];
    if (!isMap(node))
      this.refuse('BAD_VALUE', `config error, expected a map, got ${this.describe(node)}`, node);
    const out: Entry[] = [];
    for (const pair of node.items) {
      const keyNode = this.resolve(pair.key);
      // YAML 1.1 merge keys, which the reference's YAML library honours: explicit keys win.
      if (isScalar(keyNode) && typeof keyNode.value === 'symbol' && keyNode.source === '<<') {
        const valueNode = this.resolve(pair.value);
        const sources = isSeq(valueNode)
          ? valueNode.items.map((i) => this.resolve(i))
          : [valueNode];
        for (const merged of sources.reverse()) {
          for (const entry of this.entries(merged)) {
            if (!node.items.some((p) => isScalar(p.key) && p.key.value === entry.key))
              out.push(entry);
          }
        }
        continue;
      }
      if (!isScalar(keyNode) || typeof keyNode.value !== 'string') {
        const shown = isScalar(keyNode)
          ? String(keyNode.source ?? keyNode.value)
          : this.describe(keyNode);
        this.refuse('KEY_NOT_STRING', `config error, key is not of type string: ${shown}`, keyNode);
      }
      const key = keyNode.value;
      const valueNode = this.resolve(pair.value);
      if (!VALID_KEYS.has(key))
        this.refuse('UNKNOWN_KEY', `config error, unknown key '${key}'`, keyNode);
      out.push({ key, node: valueNode, position: this.position(keyNode) });
    }
    return out;
  }

  /** A list whose items must all be maps. */
  listOfMaps(entry: Entry): (YamlNode | null)[] {
    const node = entry.node;
    if (node === null) return [];
    if (!isSeq(node)) {
      this.refuse(
        'BAD_VALUE',
        `config error, '${entry.key}' must be a list, got ${this.describe(node)}`,
        node,
      );
    }
    return node.items.map((item) => {
      const resolved = this.resolve(item);
      if (!isMap(resolved)) {
        this.refuse(
          'LIST_NOT_MAPS',
          `config error, yaml file contains list of type other than map: ${this.describe(resolved)}`,
          resolved,
        );
      }
      return resolved;
    });
  }

  /** A string field; numbers and booleans count as their source text, as the reference reads them. */
  string(entry: Entry): string {
    const node = entry.node;
    if (node === null) return '';
    if (!isScalar(node)) {
      this.refuse(
        'BAD_VALUE',
        `config error, '${entry.key}' must be a string, got ${this.describe(node)}`,
        node,
      );
    }
    if (typeof node.value === 'string') return node.value;
    if (node.value === null) return '';
    return scalarText(node);
  }

  bool(entry: Entry): boolean {
    const node = entry.node;
    if (node === null) return false;
    if (!isScalar(node) || typeof node.value !== 'boolean') {
      this.refuse(
        'BAD_VALUE',
        `config error, '${entry.key}' must be true or false, got ${this.describe(node)}`,
        node,
      );
    }
    return node.value;
  }

  uint32(entry: Entry): number {
    const node = entry.node;
    if (node === null) return 0;
    if (
      !isScalar(node) ||
      typeof node.value !== 'number' ||
      !Number.isInteger(node.value) ||
      node.value < 0 ||
      node.value > MAX_UINT32
    ) {
      this.refuse(
        'BAD_VALUE',
        `config error, '${entry.key}' must be a whole number from 0 to ${MAX_UINT32}, got ${this.describe(node)}`,
        node,
      );
    }
    return node.value;
  }

  json(node: YamlNode | null): JsonValue {
    if (node === null) return null;
    if (isMap(node)) {
      const out: JsonObject = {};
      for (const pair of node.items) {
        const keyNode = this.resolve(pair.key);
        const key = isScalar(keyNode) ? String(keyNode.value) : '';
        out[key] = this.json(this.resolve(pair.value));
      }
      return out;
    }
    if (isSeq(node)) return node.items.map((i) => this.json(this.resolve(i)));
    if (isScalar(node)) {
      const v = node.value;
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null)
        return v;
      if (typeof v === 'bigint') return Number(v);
      return scalarText(node);
    }
    return null;
  }
}

function readPolicy(reader: FileReader, entry: Entry): RateLimitPolicyDoc | undefined {
  if (entry.node === null) return undefined;
  let unit: string | undefined;
  let requestsPerUnit = 0;
  let unlimited = false;
  let name: string | undefined;
  const replaces: string[] = [];
  for (const field of reader.entries(entry.node)) {
    switch (field.key) {
      case 'unit':
        unit = reader.string(field);
        break;
      case 'requests_per_unit':
        requestsPerUnit = reader.uint32(field);
        break;
      case 'unlimited':
        unlimited = reader.bool(field);
        break;
      case 'name':
        name = reader.string(field);
        break;
      case 'replaces':
        for (const item of reader.listOfMaps(field)) {
          let replaced = '';
          for (const r of reader.entries(item)) {
            if (r.key === 'name') replaced = reader.string(r);
            else reader.misplaced(r, 'in a replaces entry');
          }
          replaces.push(replaced);
        }
        break;
      default:
        reader.misplaced(field, 'in rate_limit');
    }
  }
  return {
    unit: unit === '' ? undefined : unit,
    requestsPerUnit,
    unlimited,
    name: name === '' ? undefined : name,
    replaces,
    position: reader.position(entry.node),
  };
}

function readDescriptor(reader: FileReader, node: YamlNode | null): DescriptorDoc {
  let key = '';
  let value: string | undefined;
  let rateLimit: RateLimitPolicyDoc | undefined;
  let descriptors: DescriptorDoc[] = [];
  const flags = {
    shadowMode: false,
    quotaMode: false,
    detailedMetric: false,
    valueToMetric: false,
    shareThreshold: false,
  };
  let metadata: JsonObject | undefined;
  for (const field of reader.entries(node)) {
    switch (field.key) {
      case 'key':
        key = reader.string(field);
        break;
      case 'value':
        value = reader.string(field);
        break;
      case 'rate_limit':
        rateLimit = readPolicy(reader, field);
        break;
      case 'descriptors':
        descriptors = reader.listOfMaps(field).map((d) => readDescriptor(reader, d));
        break;
      case 'shadow_mode':
        flags.shadowMode = reader.bool(field);
        break;
      case 'quota_mode':
        flags.quotaMode = reader.bool(field);
        break;
      case 'detailed_metric':
        flags.detailedMetric = reader.bool(field);
        break;
      case 'value_to_metric':
        flags.valueToMetric = reader.bool(field);
        break;
      case 'share_threshold':
        flags.shareThreshold = reader.bool(field);
        break;
      case 'metadata': {
        if (field.node !== null && !isMap(field.node)) {
          reader.refuse(
            'BAD_VALUE',
            `error parsing metadata: 'metadata' must be a map`,
            field.node,
          );
        }
        const json = reader.json(field.node);
        metadata =
          json !== null &&
          typeof json === 'object' &&
          !Array.isArray(json) &&
          Object.keys(json).length > 0
            ? json
            : undefined;
        break;
      }
      default:
        reader.misplaced(field, 'in a descriptor');
    }
  }
  return {
    key,
    value: value === '' ? undefined : value,
    rateLimit,
    descriptors,
    ...flags,
    metadata,
    position: reader.position(node),
  };
}

/**
 * Parses one configuration file. Returns the document, or the error that refuses the file
 * (the file name and the reason are in its message).
 */
export function parseConfigFile(source: string, text: string): ConfigDocument | ConfigError {
  const lines = new LineCounter();
  const doc = parseDocument(text, {
    version: '1.1',
    lineCounter: lines,
    uniqueKeys: true,
    prettyErrors: false,
  });
  const first = doc.errors[0];
  if (first !== undefined) {
    const pos = lines.linePos(first.pos[0]);
    return new ConfigError(
      'YAML_PARSE',
      source,
      `error loading config file: ${first.message.split('\n')[0] ?? first.message}`,
      { line: pos.line, column: pos.col },
    );
  }
  const reader = new FileReader(source, doc, lines);
  try {
    const root = reader.resolve(doc.contents);
    if (root !== null && !isMap(root)) {
      return new ConfigError(
        'NOT_A_MAP',
        source,
        'error loading config file: the document must be a map with domain and descriptors',
        reader.position(root),
      );
    }
    let domain = '';
    let descriptors: DescriptorDoc[] = [];
    for (const field of reader.entries(root)) {
      switch (field.key) {
        case 'domain':
          domain = reader.string(field);
          break;
        case 'descriptors':
          descriptors = reader.listOfMaps(field).map((d) => readDescriptor(reader, d));
          break;
        default:
          reader.misplaced(field, 'at the top level');
      }
    }
    return { source, domain, descriptors, warnings: reader.warnings };
  } catch (err: unknown) {
    if (err instanceof Refusal) return err.error;
    throw err;
  }
}
