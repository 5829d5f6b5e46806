// The quick reader against the full YAML loader: the same documents, or it gives up.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { ConfigError, type ConfigDocument } from '../../../src/config';
import { readFastConfig } from '../../../src/config/fast-config';
import { parseConfigFile, parseWithYaml } from '../../../src/config/yaml-loader';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** A document as the full loader makes it, positions without their path (the compiler adds it). */
function withoutPaths(doc: ConfigDocument | ConfigError | undefined): unknown {
  return JSON.parse(
    JSON.stringify(doc, (key, value: unknown) => (key === 'path' ? undefined : value)),
  ) as unknown;
}

function fullRead(text: string): ConfigDocument {
  const doc = parseWithYaml('f.yaml', text);
  if (doc instanceof ConfigError) throw doc;
  return doc;
}

/** A scalar as written: plain when that reads back as the same text, else quoted. */
const written = fc
  .tuple(
    fc.oneof(
      fc.stringMatching(/^[a-z][a-z0-9_./*-]{0,8}$/),
      fc.constantFrom('yes', 'No', 'on', '0x1F', '1.5', '012', '2001-12-14', 'a b', 'a#b'),
      fc.constantFrom('null', '~', 'a: b', 'x #y', '*', '-1', "it's", '"q"', '#', ''),
    ),
    fc.constantFrom('plain', 'double', 'single'),
  )
  .map(([text, style]) => {
    const isPlainSafe = /^[a-z0-9~][a-z0-9_./*# -]*$/i.test(text) && !/: |:$| #|\s$/.test(text);
    if (style === 'plain' && isPlainSafe) return text;
    if (style !== 'single' && !/["\\]/.test(text)) return `"${text}"`;
    return `'${text.replace(/'/g, "''")}'`;
  });

interface GenDescriptor {
  key: string;
  value: string | undefined;
  policy: { unit: string; rpu: number; flow: boolean; unlimited: boolean } | undefined;
  flags: [string, string][];
  children: GenDescriptor[];
}

const genDescriptor: fc.Memo<GenDescriptor> = fc.memo((depth) =>
  fc.record({
    key: written,
    value: fc.option(written, { nil: undefined }),
    policy: fc.option(
      fc.record({
        unit: fc.constantFrom('second', 'MINUTE', 'hour', 'fortnight'),
        rpu: fc.nat(5000),
        flow: fc.boolean(),
        unlimited: fc.boolean(),
      }),
      { nil: undefined },
    ),
    flags: fc.subarray([
      ['shadow_mode', 'true'],
      ['quota_mode', 'yes'],
      ['detailed_metric', 'false'],
      ['value_to_metric', 'off'],
      ['share_threshold', 'True'],
    ] as [string, string][]),
    children: depth > 1 ? fc.array(genDescriptor(depth - 1), { maxLength: 3 }) : fc.constant([]),
  }),
);

/** Renders descriptors at `indent`, in one of the layouts people and generators write. */
function render(
  ds: GenDescriptor[],
  indent: number,
  style: { compact: boolean; gap: string },
): string {
  const pad = ' '.repeat(indent);
  let out = '';
  for (const d of ds) {
    const inner = pad + ' '.repeat(2 + style.gap.length - 1);
    out += `${pad}-${style.gap}key: ${d.key}\n`;
    if (d.value !== undefined) out += `${inner}value: ${d.value}   # a comment\n`;
    for (const [flag, v] of d.flags) out += `${inner}${flag}: ${v}\n`;
    const p = d.policy;
    if (p !== undefined) {
      const fields = p.unlimited
        ? [['unlimited', 'true']]
        : [
            ['unit', p.unit],
            ['requests_per_unit', `${p.rpu}`],
          ];
      if (p.flow)
        out += `${inner}rate_limit: { ${fields.map(([k, v]) => `${k}: ${v}`).join(', ')} }\n`;
      else
        out += `${inner}rate_limit:\n${fields.map(([k, v]) => `${inner}  ${k}: ${v}\n`).join('')}`;
    }
    if (d.children.length > 0) {
      out += `\n${inner}descriptors:\n`;
      out += render(d.children, style.compact ? inner.length : inner.length + 2, style);
    }
  }
  return out;
}

it('reads generated files as the full loader does', () => {
  fc.assert(
    fc.property(
      written,
      fc.array(genDescriptor(3), { maxLength: 6 }),
      fc.record({ compact: fc.boolean(), gap: fc.constantFrom(' ', '   ') }),
      fc.boolean(),
      (domain, ds, style, marker) => {
        const text = `${marker ? '---\n' : ''}# generated\ndomain: ${domain}\ndescriptors:${ds.length === 0 ? ' []' : ''}\n${render(ds, style.compact ? 0 : 2, style)}`;
        const full = parseWithYaml('f.yaml', text);
        const quick = readFastConfig('f.yaml', text);
        if (full instanceof ConfigError) {
          expect(quick).toBeUndefined();
          return;
        }
        expect(quick).toBeDefined();
        expect(withoutPaths(quick)).toEqual(withoutPaths(full));
      },
    ),
    { numRuns: 300 },
  );
});

it.each([
  ['an anchor and an alias', 'domain: d\ndescriptors:\n  - &a\n    key: k\n  - *a\n'],
  ['a tag', 'domain: !!str d\n'],
  ['a block scalar', 'domain: |\n  d\n'],
  ['a value on two lines', 'domain: d\ndescriptors:\n  - key: k\n    value: a\n      b\n'],
  ['a tab', 'domain: d\ndescriptors:\n\t- key: k\n'],
  ['Windows line ends', 'domain: d\r\ndescriptors:\r\n'],
  ['a misplaced key', 'domain: d\ndescriptors:\n  - key: k\n    unit: second\n'],
  ['an unknown key', 'domain: d\nratelimit: 1\n'],
  ['metadata', 'domain: d\ndescriptors:\n  - key: k\n    metadata:\n      a: 1\n'],
  [
    'a number out of range',
    'domain: d\ndescriptors:\n  - key: k\n    rate_limit: { requests_per_unit: 4294967296 }\n',
  ],
  ['a boolean that is not', 'domain: d\ndescriptors:\n  - key: k\n    shadow_mode: maybe\n'],
  ['an escape', 'domain: "d\\n"\n'],
  ['a duplicate key', 'domain: d\ndomain: e\n'],
  ['a second document', 'domain: d\n---\ndomain: e\n'],
  ['a list item that is not a map', 'domain: d\ndescriptors:\n  - just a string\n'],
  ['a flow list', 'domain: d\ndescriptors: [{key: k}]\n'],
])('gives up on %s, which the full loader reads', (_what, text) => {
  expect(readFastConfig('f.yaml', text)).toBeUndefined();
});

it('reads every bad fixture and example as the full loader does', () => {
  const dirs = [
    path.join(ROOT, 'test', 'fixtures', 'config', 'bad'),
    path.join(ROOT, 'examples', 'ratelimit', 'config'),
  ];
  for (const dir of dirs) {
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.yaml'))) {
      const text = readFileSync(path.join(dir, name), 'utf8');
      const quick = parseConfigFile(name, text);
      const full = parseWithYaml(name, text);
      expect({ name, doc: withoutPaths(quick) }).toEqual({ name, doc: withoutPaths(full) });
      if (quick instanceof ConfigError) expect(quick.message).toBe((full as ConfigError).message);
    }
  }
});

it('gives flow and block maps the positions the full loader gives', () => {
  const text =
    'domain: d\ndescriptors:\n- key: a\n  rate_limit:   {unit: second, requests_per_unit: 1}\n-    key: b\n     rate_limits:\n       - { unit: minute }\n       -   unit: hour\n';
  expect(withoutPaths(readFastConfig('f.yaml', text))).toEqual(withoutPaths(fullRead(text)));
});

it('leaves a file nested far too deep to the full loader, which refuses it', () => {
  let deep = 'domain: deep\ndescriptors:\n';
  let indent = '  ';
  for (let i = 0; i < 2000; i++) {
    deep += `${indent}- key: k${i}\n${indent}  descriptors:\n`;
    indent += '    ';
  }
  expect(readFastConfig('deep.yaml', deep)).toBeUndefined();
  const parsed = parseConfigFile('deep.yaml', deep);
  expect(parsed).toBeInstanceOf(ConfigError);
  expect((parsed as ConfigError).code).toBe('TOO_DEEP');
});
