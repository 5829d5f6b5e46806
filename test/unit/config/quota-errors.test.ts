// Every reason a `quota_buckets` list is refused, through the loader as the service reads a
// file: its code and its message as docs/configuration-errors.md's quota table documents them,
// every row of that table reached, and a reason added to the parser without a row fails here.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  compile,
  ConfigError,
  CONFIG_ERROR_CODES,
  parseConfigFile,
  type ConfigDocument,
} from '../../../src/config';
import { StatsStore } from '../../../src/stats';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const DOCS = readFileSync(path.join(ROOT, 'docs', 'configuration-errors.md'), 'utf8');

/** The rows of the quota table: code and message template (`<...>` stands for any text). */
function documentedRows(): { code: string; template: RegExp; text: string }[] {
  const start = DOCS.indexOf('\n## Quota buckets');
  const section = DOCS.slice(start, DOCS.indexOf('\n## ', start + 1));
  return [...section.matchAll(/^\| `([A-Z_]+)` +\|[^|\n]+\| `(.+)` +\|$/gm)].map((m) => {
    const text = m[2] ?? '';
    const pattern = text
      .split(/<[a-z]+>/)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.+');
    return { code: m[1] ?? '', template: new RegExp(`^${pattern}$`), text };
  });
}

/** A file of domain `q` with this `quota_buckets` list (YAML, indented under the key). */
const file = (list: string): string => `domain: q\nquota_buckets:\n${list}`;

/** Loads files as the service does; the refusals, as `code: message without the source`. */
function refusals(
  files: Record<string, string>,
  options: { merge?: boolean; memcache?: boolean } = {},
): string[] {
  const errors: ConfigError[] = [];
  const docs: ConfigDocument[] = [];
  for (const [name, text] of Object.entries(files)) {
    const parsed = parseConfigFile(name, text);
    if (parsed instanceof ConfigError) errors.push(parsed);
    else docs.push(parsed);
  }
  const result = compile(docs, {
    stats: new StatsStore(),
    mergeDomainConfig: options.merge ?? false,
    sanitizeDots: false,
    ...(options.memcache === true ? { backend: { name: 'memcache', unsupported: {} } } : {}),
  });
  if (!result.ok) errors.push(...result.errors);
  return errors.map((e) => `${e.code}: ${e.reason}`);
}

type Case = [string, Record<string, string>, { merge?: boolean; memcache?: boolean }?];

const CASES: Case[] = [
  ['not a list', { 'a.yaml': file('  bucket: x\n') }],
  ['an item not a map', { 'a.yaml': file('  - just text\n') }],
  [
    'an unknown key',
    { 'a.yaml': file('  - { bucket: { t: a }, blanket_rule: deny_all, x: 1 }\n') },
  ],
  ['no bucket', { 'a.yaml': file('  - { blanket_rule: deny_all }\n') }],
  ['a bucket not a map', { 'a.yaml': file('  - { bucket: [a], blanket_rule: deny_all }\n') }],
  [
    'an empty bucket key',
    { 'a.yaml': file("  - { bucket: { '': a }, blanket_rule: deny_all }\n") },
  ],
  [
    'a bucket key without a value',
    { 'a.yaml': file("  - { bucket: { t: '' }, blanket_rule: deny_all }\n") },
  ],
  [
    'a * inside a value',
    { 'a.yaml': file('  - { bucket: { t: "a*b" }, blanket_rule: deny_all }\n') },
  ],
  [
    'a rate not a whole number',
    { 'a.yaml': file('  - { bucket: { t: a }, requests_per_unit: -1, unit: second }\n') },
  ],
  [
    'an unknown unit',
    { 'a.yaml': file('  - { bucket: { t: a }, requests_per_unit: 1, unit: fortnight }\n') },
  ],
  ['week', { 'a.yaml': file('  - { bucket: { t: a }, requests_per_unit: 7, unit: week }\n') }],
  [
    'an unknown strategy',
    {
      'a.yaml': file(
        '  - { bucket: { t: a }, requests_per_unit: 1, unit: second, strategy: leaky }\n',
      ),
    },
  ],
  [
    'an unknown blanket rule',
    { 'a.yaml': file('  - { bucket: { t: a }, blanket_rule: deny_some }\n') },
  ],
  [
    'a budget beside a blanket rule',
    { 'a.yaml': file('  - { bucket: { t: a }, blanket_rule: deny_all, unit: second }\n') },
  ],
  [
    'neither a budget nor a blanket rule',
    { 'a.yaml': file('  - { bucket: { t: a }, unit: second }\n') },
  ],
  [
    'requests_per_time_unit, which Envoy ignores',
    {
      'a.yaml': file(
        '  - { bucket: { t: a }, requests_per_unit: 1, unit: second, strategy: requests_per_time_unit }\n',
      ),
    },
  ],
  [
    'a token bucket of 0',
    {
      'a.yaml': file(
        '  - { bucket: { t: a }, requests_per_unit: 0, unit: second, strategy: token_bucket }\n',
      ),
    },
  ],
  [
    'a short assignment_ttl',
    { 'a.yaml': file('  - { bucket: { t: a }, blanket_rule: deny_all, assignment_ttl: 500ms }\n') },
  ],
  [
    'a long assignment_ttl',
    { 'a.yaml': file('  - { bucket: { t: a }, blanket_rule: deny_all, assignment_ttl: 1h }\n') },
  ],
  [
    'one bucket twice in a list',
    {
      'a.yaml': file(
        '  - { bucket: { t: a }, blanket_rule: deny_all }\n  - { bucket: { t: a }, blanket_rule: allow_all }\n',
      ),
    },
  ],
  [
    'one bucket in two files of a domain',
    {
      'a.yaml': file('  - { bucket: { t: a }, blanket_rule: deny_all }\n'),
      'b.yaml': file('  - { bucket: { t: a }, blanket_rule: allow_all }\n'),
    },
    { merge: true },
  ],
  [
    'a budget on memcached',
    { 'a.yaml': file('  - { bucket: { t: a }, requests_per_unit: 1, unit: second }\n') },
    { memcache: true },
  ],
];

describe('quota_buckets refusals, as docs/configuration-errors.md documents them', () => {
  const rows = documentedRows();
  const reached = new Set<string>();

  // One object per case: a row's missing third item would leave jest a parameter to read as `done`.
  const cases = CASES.map(([name, files, options]) => ({ name, files, options }));
  it.each(cases)('$name', ({ files, options }) => {
    const found = refusals(files, options);
    expect(found).toHaveLength(1);
    const [code, message] = found[0]!.split(/: (.*)/s) as [string, string];
    // Without the position the loader appends, the message is a row's template.
    const bare = message.replace(/ \((line \d+, column \d+, )?at [^)]+\)$/, '');
    const row = rows.find((r) => r.code === code && r.template.test(bare));
    expect({ code, message: bare, documented: row?.text }).toEqual({
      code,
      message: bare,
      documented: expect.any(String),
    });
    reached.add(row!.text);
    expect(Object.keys(CONFIG_ERROR_CODES)).toContain(code);
  });

  it('reaches every row, and has a case for every reason the parser and the compiler give', () => {
    expect(rows.length).toBe(CASES.length);
    expect(rows.filter((r) => !reached.has(r.text)).map((r) => r.text)).toEqual([]);
    // A reason is a `problems.add(` of the parser (its `readWord` one a reason per word list)
    // or a ConfigError the compiler makes of the rules; one case each.
    const parser = readFileSync(path.join(ROOT, 'src', 'quota', 'parse-rules.ts'), 'utf8');
    const compiler = readFileSync(path.join(ROOT, 'src', 'config', 'quota-buckets.ts'), 'utf8');
    const count = (text: string, what: RegExp): number => (text.match(what) ?? []).length;
    const reasons =
      count(parser, /problems\.add\(/g) -
      1 +
      count(parser, /\breadWord\(item,/g) +
      count(compiler, /new ConfigError\(\s*'[A-Z_]+'/g);
    expect(CASES.length).toBe(reasons);
  });
});
