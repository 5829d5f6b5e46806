// quota_buckets in a configuration file: read with positions, compiled into the snapshot,
// refused with file, line and reason like every other refusal.
import { compile, ConfigError, parseConfigFile, type ConfigDocument } from '../../../src/config';
import { StatsStore } from '../../../src/stats';

function doc(text: string, source = 'edge.yaml'): ConfigDocument {
  const parsed = parseConfigFile(source, text);
  if (parsed instanceof ConfigError) throw parsed;
  return parsed;
}

function refusal(text: string): ConfigError {
  const parsed = parseConfigFile('edge.yaml', text);
  if (!(parsed instanceof ConfigError)) throw new Error('accepted');
  return parsed;
}

const EDGE = `quota_buckets:
  - bucket: { name: api, tenant: "*" }
    requests_per_unit: 100
    unit: second
  - bucket: { name: blocked }
    blanket_rule: deny_all
domain: edge
descriptors:
  - key: k
    rate_limit: { unit: second, requests_per_unit: 1 }
`;

test('a file with quota_buckets (before its domain) compiles into the snapshot beside its descriptors', () => {
  const parsed = doc(EDGE);
  expect(parsed.quotaBuckets?.map((r) => [r.domain, r.id, r.source])).toEqual([
    ['edge', 'name=api,tenant=*', 'edge.yaml'],
    ['edge', 'name=blocked', 'edge.yaml'],
  ]);
  const result = compile([parsed], {
    stats: new StatsStore(),
    mergeDomainConfig: false,
    sanitizeDots: false,
  });
  if (!result.ok) throw new Error(result.errors.join('\n'));
  const rules = result.snapshot.quotaRules;
  expect(
    rules.match(
      'edge',
      new Map([
        ['name', 'api'],
        ['tenant', 'x'],
      ]),
    )?.id,
  ).toBe('name=api,tenant=*');
  expect(
    result.snapshot.findLimit('edge', { entries: [{ key: 'k', value: 'v' }], limit: undefined }),
  ).toBeDefined();
});

test('a file without quota_buckets reads as before, and its snapshot has no quota rules', () => {
  const parsed = doc('domain: d\ndescriptors: []\n');
  expect('quotaBuckets' in parsed).toBe(false);
  const result = compile([parsed], {
    stats: new StatsStore(),
    mergeDomainConfig: false,
    sanitizeDots: false,
  });
  expect(result.ok && result.snapshot.quotaRules.isEmpty).toBe(true);
});

test('a refusal names the file, the line, the column and the path', () => {
  const err = refusal(`domain: edge
quota_buckets:
  - bucket: { name: api }
    requests_per_unit: 10
    unit: fortnight
`);
  expect(err.code).toBe('INVALID_UNIT');
  expect(err.position).toEqual({ line: 5, column: 11, path: 'quota_buckets[0].unit' });
  expect(err.message).toBe(
    'edge.yaml: config error, \'unit\' must be one of second, minute, hour, day, month, year, got "fortnight" (line 5, column 11, at quota_buckets[0].unit)',
  );
  // A key the rule does not know points at itself; a missing field at its item.
  expect(
    refusal('domain: e\nquota_buckets:\n  - { bucket: { a: b }, colour: red }\n').position,
  ).toMatchObject({
    line: 3,
    path: 'quota_buckets[0].colour',
  });
  expect(refusal('domain: e\nquota_buckets:\n  - bucket: { a: b }\n').position).toEqual({
    line: 3,
    column: 5,
    path: 'quota_buckets[0]',
  });
});

test('merged files refuse a bucket written twice in one domain, naming both', () => {
  const a = doc(
    'domain: e\nquota_buckets: [{ bucket: { a: b }, blanket_rule: deny_all }]\n',
    'a.yaml',
  );
  const b = doc(
    'domain: e\nquota_buckets: [{ bucket: { a: b }, blanket_rule: allow_all }]\n',
    'b.yaml',
  );
  const result = compile([a, b], {
    stats: new StatsStore(),
    mergeDomainConfig: true,
    sanitizeDots: false,
  });
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.errors.map((e) => [e.code, e.message])).toEqual([
    [
      'DUPLICATE_DESCRIPTOR',
      "b.yaml: config error, bucket {a=b} of domain 'e' at quota_buckets[0] is already the bucket of quota_buckets[0] in a.yaml",
    ],
  ]);
});

test('the memcache backend refuses budgets (it cannot share them between replicas), not blanket rules', () => {
  const options = {
    stats: new StatsStore(),
    mergeDomainConfig: false,
    sanitizeDots: false,
    backend: { name: 'memcache', unsupported: {} },
  };
  const result = compile([doc(EDGE)], options);
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.errors.map((e) => e.code)).toEqual(['ALGORITHM_UNSUPPORTED']);
  expect(result.errors[0]?.message).toMatch(
    /memcache backend cannot hold; use BACKEND_TYPE=redis.*\(at quota_buckets\[0\]\)/,
  );
  const blanket = doc('domain: e\nquota_buckets: [{ bucket: { a: b }, blanket_rule: deny_all }]\n');
  expect(compile([blanket], options).ok).toBe(true);
});
