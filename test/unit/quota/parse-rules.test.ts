// The quota_buckets list: what is accepted, what each refusal says, and where it points.
import { parse } from 'yaml';
import { parseQuotaBuckets, type QuotaProblem, type QuotaRule } from '../../../src/quota';

const WHERE = { domain: 'edge', source: 'edge.yaml' };

function rules(yaml: string): readonly QuotaRule[] {
  const result = parseQuotaBuckets(
    (parse(yaml) as { quota_buckets: unknown }).quota_buckets,
    WHERE,
  );
  if (!result.ok) throw new Error(result.problems.map((p) => p.reason).join('\n'));
  return result.rules;
}

function problems(yaml: string): QuotaProblem[] {
  const result = parseQuotaBuckets(
    (parse(yaml) as { quota_buckets: unknown }).quota_buckets,
    WHERE,
    (path) => ({ line: 1, column: 1, path }),
  );
  if (result.ok) throw new Error('accepted');
  return [...result.problems];
}

test("the issue's example compiles, in file order, keys sorted", () => {
  const list = rules(`
quota_buckets:
  - bucket: { tenant: "*", name: api }
    requests_per_unit: 100
    unit: second
    assignment_ttl: 30s
  - bucket: { name: blocked }
    blanket_rule: deny_all
  - bucket: { name: internal }
    blanket_rule: allow_all
  - bucket: { name: "ab*", port: 8080 }
    requests_per_unit: 60
    unit: minute
    strategy: token_bucket
`);
  expect(list.map((r) => r.id)).toEqual([
    'name=api,tenant=*',
    'name=blocked',
    'name=internal',
    'name=ab*,port=8080',
  ]);
  expect(list[0]).toMatchObject({
    domain: 'edge',
    source: 'edge.yaml',
    path: 'quota_buckets[0]',
    assignmentTtlMs: 30_000,
    matchers: [
      { key: 'name', value: 'api', kind: 'exact' },
      { key: 'tenant', value: '*', kind: 'any' },
    ],
    policy: {
      kind: 'budget',
      strategy: 'token_bucket',
      requestsPerUnit: 100,
      unit: 'SECOND',
      maxTokens: 100,
    },
  });
  expect(list[1]?.policy).toEqual({ kind: 'blanket', rule: 'deny_all' });
  expect(list[2]?.assignmentTtlMs).toBeUndefined();
  // max_tokens defaults to one unit's budget; a number value is read as its text.
  expect(list[3]?.policy).toMatchObject({ strategy: 'token_bucket', maxTokens: 60 });
  expect(list[3]?.matchers[0]).toMatchObject({ kind: 'prefix', value: 'ab*' });
  expect(list[3]?.matchers[1]).toMatchObject({ key: 'port', value: '8080' });
  expect(Object.isFrozen(list[0]?.policy)).toBe(true);
});

test('no list, or an empty one, is no rules', () => {
  expect(parseQuotaBuckets(undefined, WHERE)).toEqual({ ok: true, rules: [] });
  expect(parseQuotaBuckets([], WHERE)).toEqual({ ok: true, rules: [] });
});

describe('each refusal names its code, reason and path', () => {
  it.each([
    ['quota_buckets: 3', 'BAD_VALUE', 'quota_buckets', /must be a list, got "3"/],
    ['quota_buckets: [7]', 'LIST_NOT_MAPS', 'quota_buckets[0]', /must be a map/],
    [
      'quota_buckets: [{ bucket: { a: b }, blanket_rule: deny_all, colour: red }]',
      'UNKNOWN_KEY',
      'quota_buckets[0].colour',
      /unknown key 'colour'/,
    ],
    [
      'quota_buckets: [{ blanket_rule: deny_all }]',
      'BAD_VALUE',
      'quota_buckets[0]',
      /needs 'bucket'/,
    ],
    [
      'quota_buckets: [{ bucket: {}, blanket_rule: deny_all }]',
      'BAD_VALUE',
      'quota_buckets[0].bucket',
      /map of keys/,
    ],
    [
      'quota_buckets: [{ bucket: { "": x }, blanket_rule: deny_all }]',
      'EMPTY_KEY',
      'quota_buckets[0].bucket',
      /empty/,
    ],
    [
      'quota_buckets: [{ bucket: { a: "" }, blanket_rule: deny_all }]',
      'BAD_VALUE',
      'quota_buckets[0].bucket.a',
      /needs a value/,
    ],
    [
      'quota_buckets: [{ bucket: { a: "x*y" }, blanket_rule: deny_all }]',
      'BAD_VALUE',
      'quota_buckets[0].bucket.a',
      /\* may only end a value/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b }, unit: second }]',
      'BAD_VALUE',
      'quota_buckets[0]',
      /needs 'requests_per_unit' and 'unit'/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b }, requests_per_unit: -1, unit: second }]',
      'BAD_VALUE',
      'quota_buckets[0].requests_per_unit',
      /whole number from 0/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b }, requests_per_unit: 5, unit: fortnight }]',
      'INVALID_UNIT',
      'quota_buckets[0].unit',
      /one of second, minute, hour, day, month, year/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b }, requests_per_unit: 5, unit: week }]',
      'INVALID_UNIT',
      'quota_buckets[0].unit',
      /no week/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b }, requests_per_unit: 5, unit: second, strategy: leaky }]',
      'INVALID_ALGORITHM',
      'quota_buckets[0].strategy',
      /must be one of token_bucket, got "leaky"/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b }, requests_per_unit: 5, unit: second, strategy: requests_per_time_unit }]',
      'INVALID_ALGORITHM',
      'quota_buckets[0].strategy',
      /Envoy's rate_limit_quota filter ignores it/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b }, requests_per_unit: 0, unit: second }]',
      'BAD_LIMIT',
      'quota_buckets[0].requests_per_unit',
      /above 0 \(use blanket_rule: deny_all\)/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b }, requests_per_unit: 0, unit: second, strategy: token_bucket }]',
      'BAD_LIMIT',
      'quota_buckets[0].requests_per_unit',
      /above 0/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b }, requests_per_unit: 5, unit: second, strategy: token_bucket, max_tokens: 0 }]',
      'BAD_VALUE',
      'quota_buckets[0].max_tokens',
      /from 1/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b }, blanket_rule: maybe }]',
      'BAD_VALUE',
      'quota_buckets[0].blanket_rule',
      /allow_all, deny_all/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b }, blanket_rule: deny_all, unit: second }]',
      'BAD_VALUE',
      'quota_buckets[0].unit',
      /no meaning beside 'blanket_rule'/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b }, blanket_rule: deny_all, assignment_ttl: 10 }]',
      'BAD_VALUE',
      'quota_buckets[0].assignment_ttl',
      /must be a duration from 20s to 1800s \(30m\)/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b }, blanket_rule: deny_all, assignment_ttl: 19999ms }]',
      'BAD_VALUE',
      'quota_buckets[0].assignment_ttl',
      /at least 20s, got "19999ms": Envoy starts a lost stream again only at its next 5 s report and a restarted service waits 6 s/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b }, blanket_rule: deny_all, assignment_ttl: 30m1s }]',
      'BAD_VALUE',
      'quota_buckets[0].assignment_ttl',
      /from 20s to 1800s \(30m\)/,
    ],
    [
      'quota_buckets: [{ bucket: { a: b, c: d }, blanket_rule: deny_all }, { bucket: { c: d, a: b }, blanket_rule: allow_all }]',
      'DUPLICATE_DESCRIPTOR',
      'quota_buckets[1].bucket',
      /bucket \{a=b,c=d\} is already the bucket of quota_buckets\[0\]/,
    ],
  ])('%s', (yaml, code, path, reason) => {
    const [first] = problems(yaml);
    expect(first).toMatchObject({ code, path, position: { line: 1, column: 1, path } });
    expect(first?.reason).toMatch(/^config error, /);
    expect(first?.reason).toMatch(reason);
  });
});

test('every problem of the list is reported, not only the first', () => {
  const found = problems(`
quota_buckets:
  - bucket: { a: b }
    requests_per_unit: x
    unit: week
  - bucket: { c: "" }
    blanket_rule: deny_all
`);
  expect(found.map((p) => p.path)).toEqual([
    'quota_buckets[0].requests_per_unit',
    'quota_buckets[0].unit',
    'quota_buckets[1].bucket.c',
  ]);
});

test('without a locator (an xDS resource) the position is undefined and the path stays', () => {
  const result = parseQuotaBuckets([{ bucket: { a: 'b' } }], WHERE);
  expect(result).toMatchObject({
    ok: false,
    problems: [{ path: 'quota_buckets[0]', position: undefined }],
  });
});
