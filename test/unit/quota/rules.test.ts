// The most specific rule governs a bucket: more keys, then fewer "*", then fewer prefixes, then file order.
import type { QuotaRuleSet } from '../../../src/quota';
import { mergeQuotaRules, parseQuotaBuckets, type QuotaRule } from '../../../src/quota';

function compile(domain: string, items: unknown[], source = `${domain}.yaml`): QuotaRule[] {
  const result = parseQuotaBuckets(items, { domain, source });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return [...result.rules];
}

function set(items: unknown[]): QuotaRuleSet {
  const merged = mergeQuotaRules(compile('edge', items));
  if (!merged.ok) throw new Error('duplicates');
  return merged.set;
}

const deny = (bucket: Record<string, string>): unknown => ({ bucket, blanket_rule: 'deny_all' });
const ids = (pairs: Record<string, string>, s: QuotaRuleSet): string | undefined =>
  s.match('edge', new Map(Object.entries(pairs)))?.id;

test('every key of the rule must be in the bucket id; extra keys are fine', () => {
  const s = set([deny({ name: 'api', tenant: '*' })]);
  expect(ids({ name: 'api', tenant: 'acme' }, s)).toBe('name=api,tenant=*');
  expect(ids({ name: 'api', tenant: 'acme', region: 'eu' }, s)).toBe('name=api,tenant=*');
  expect(ids({ name: 'api' }, s)).toBeUndefined();
  expect(ids({ name: 'web', tenant: 'acme' }, s)).toBeUndefined();
  expect(
    s.match(
      'other',
      new Map([
        ['name', 'api'],
        ['tenant', 'x'],
      ]),
    ),
  ).toBeUndefined();
});

test('prefixes match values that start with them', () => {
  const s = set([deny({ path: '/api*' })]);
  expect(ids({ path: '/api/v1' }, s)).toBe('path=/api*');
  expect(ids({ path: '/api' }, s)).toBe('path=/api*');
  expect(ids({ path: '/ap' }, s)).toBeUndefined();
});

test('more keys win, then fewer *, then fewer prefixes, then the earlier rule', () => {
  const s = set([
    deny({ name: '*' }),
    deny({ name: 'api' }),
    deny({ name: 'a*' }),
    deny({ name: '*', tenant: '*' }),
    deny({ name: 'api', tenant: 'a*' }),
    deny({ name: 'api', tenant: '*' }),
    deny({ name: 'a*', tenant: 'acme' }),
  ]);
  expect(ids({ name: 'api' }, s)).toBe('name=api');
  expect(ids({ name: 'ab' }, s)).toBe('name=a*');
  expect(ids({ name: 'zz' }, s)).toBe('name=*');
  expect(ids({ name: 'api', tenant: 'zz' }, s)).toBe('name=api,tenant=*');
  // Both have no "*" and one prefix: the earlier wins.
  expect(ids({ name: 'api', tenant: 'acme' }, s)).toBe('name=api,tenant=a*');
  expect(ids({ name: 'zz', tenant: 'q' }, s)).toBe('name=*,tenant=*');
});

test("merged files keep each domain's rules apart and refuse a bucket written twice", () => {
  const a = compile('edge', [deny({ name: 'api' })], 'a.yaml');
  const b = compile('edge', [deny({ name: 'web' })], 'b.yaml');
  const c = compile('other', [deny({ name: 'api' })], 'c.yaml');
  const merged = mergeQuotaRules([...a, ...b, ...c]);
  expect(merged.ok).toBe(true);
  if (!merged.ok) return;
  expect(merged.set.domains().sort()).toEqual(['edge', 'other']);
  expect(merged.set.rulesOf('edge').map((r) => r.source)).toEqual(['a.yaml', 'b.yaml']);
  const twice = mergeQuotaRules([...a, ...compile('edge', [deny({ name: 'api' })], 'd.yaml')]);
  expect(twice).toMatchObject({
    ok: false,
    duplicates: [{ rule: { source: 'd.yaml' }, earlier: { source: 'a.yaml' } }],
  });
  expect(mergeQuotaRules([])).toMatchObject({ ok: true, set: { isEmpty: true } });
});
