// The compiled matcher against the simple one it replaced, over generated rules and values.
import fc from 'fast-check';
import {
  compile,
  type ConfigDocument,
  type DescriptorDoc,
  type DescriptorQuery,
} from '../../../src/config';
import { StatsStore } from '../../../src/stats';
import { SimpleMatcher } from '../../helpers/simple-matcher';

/** Short texts over few letters, so that generated values and patterns often meet. */
const text = fc
  .array(fc.constantFrom('a', 'b', '/', '.'), { minLength: 0, maxLength: 5 })
  .map((chars) => chars.join(''));

/** A configured value: exact, a prefix (`x*`), or with `*` anywhere; undefined for key-only. */
const configuredValue: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constant(undefined),
  text.filter((t) => t !== ''),
  text.map((t) => `${t}*`),
  fc.tuple(text, text).map(([a, b]) => `${a}*${b}`),
  fc.tuple(text, text, text).map(([a, b, c]) => `${a}*${b}*${c}`),
);

function descriptor(
  key: string,
  value: string | undefined,
  hasRule: boolean,
  descriptors: DescriptorDoc[],
): DescriptorDoc {
  return {
    key,
    value,
    rateLimit: hasRule
      ? {
          unit: 'second',
          requestsPerUnit: 1,
          unlimited: false,
          name: undefined,
          replaces: [],
          algorithm: undefined,
          burst: undefined,
          position: undefined,
        }
      : undefined,
    rateLimits: [],
    descriptors,
    shadowMode: false,
    quotaMode: false,
    detailedMetric: false,
    valueToMetric: false,
    shareThreshold: false,
    metadata: undefined,
    position: undefined,
  };
}

/** One level of distinct descriptors (a key and value pair once), children below some. */
function level(depth: number): fc.Arbitrary<DescriptorDoc[]> {
  const entry = fc.record({
    key: fc.constantFrom('k', 'j'),
    value: configuredValue,
    hasRule: fc.boolean(),
    children: depth > 0 ? level(depth - 1) : fc.constant<DescriptorDoc[]>([]),
  });
  return fc
    .uniqueArray(entry, { maxLength: 12, selector: (e) => `${e.key}\u0000${e.value ?? '\u0001'}` })
    .map((entries) => entries.map((e) => descriptor(e.key, e.value, e.hasRule, e.children)));
}

const query: fc.Arbitrary<DescriptorQuery> = fc
  .array(fc.record({ key: fc.constantFrom('k', 'j'), value: text }), {
    minLength: 1,
    maxLength: 2,
  })
  .map((entries) => ({ entries, limit: undefined }));

it('matches as the simple matcher does: exact, then the first wildcard in order, then the key', () => {
  fc.assert(
    fc.property(level(1), fc.array(query, { minLength: 1, maxLength: 30 }), (top, queries) => {
      const doc: ConfigDocument = { source: 'gen', domain: 'd', descriptors: top, warnings: [] };
      const compiled = compile([doc], {
        stats: new StatsStore(),
        mergeDomainConfig: false,
        sanitizeDots: false,
      });
      if (!compiled.ok) throw new Error(compiled.errors.map((e) => e.message).join('\n'));
      const oracle = new SimpleMatcher([doc]);
      for (const q of queries)
        expect(compiled.snapshot.findLimit('d', q)?.rule.statKey).toBe(oracle.find('d', q));
    }),
    { numRuns: 400 },
  );
});

it('finds the first of many prefix and inner patterns whatever their number', () => {
  const descriptors = [
    ...Array.from({ length: 2000 }, (_, i) => descriptor('path', `/api/v${i}/*`, true, [])),
    descriptor('path', '/api/*', true, []),
    descriptor('path', '/api/v1*x', true, []),
    descriptor('path', '*', true, []),
  ];
  const doc: ConfigDocument = { source: 'gen', domain: 'd', descriptors, warnings: [] };
  const compiled = compile([doc], {
    stats: new StatsStore(),
    mergeDomainConfig: false,
    sanitizeDots: false,
  });
  if (!compiled.ok) throw new Error('refused');
  const oracle = new SimpleMatcher([doc]);
  for (const value of ['/api/v1999/a', '/api/v1/x', '/api/v10x', '/api/other', '/', '', '/api/v']) {
    const q = { entries: [{ key: 'path', value }], limit: undefined };
    expect(compiled.snapshot.findLimit('d', q)?.rule.statKey).toBe(oracle.find('d', q));
  }
});
