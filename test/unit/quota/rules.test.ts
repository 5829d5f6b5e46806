// The most specific rule governs a bucket: more keys, then fewer "*", then fewer prefixes, then
// longer prefixes, then file order; the index finds the rule a walk of the list would.
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

test('a longer prefix beats a shorter one whatever the file order', () => {
  const s = set([
    deny({ name: 'a*' }),
    deny({ name: 'abc*' }),
    deny({ name: 'ab*' }),
    deny({ name: 'api', tenant: 'a*' }),
    deny({ name: 'api', tenant: 'acm*' }),
  ]);
  expect(ids({ name: 'abcd' }, s)).toBe('name=abc*');
  expect(ids({ name: 'abx' }, s)).toBe('name=ab*');
  expect(ids({ name: 'ax' }, s)).toBe('name=a*');
  expect(ids({ name: 'api', tenant: 'acme' }, s)).toBe('name=api,tenant=acm*');
  expect(ids({ name: 'api', tenant: 'ax' }, s)).toBe('name=api,tenant=a*');
  // Equal lengths: the earlier still wins.
  const tie = set([deny({ name: 'ab*' }), deny({ name: 'a*', tenant: 'x' }), deny({ name: 'a*' })]);
  expect(ids({ name: 'abz', tenant: 'x' }, tie)).toBe('name=a*,tenant=x');
  const order = set([deny({ path: '/a*' }), deny({ path: '/b*' })]);
  expect(order.rulesOf('edge').map((r) => r.id)).toEqual(['path=/a*', 'path=/b*']);
});

test('the index finds the rule that a walk of every rule in order finds', () => {
  // Rules with exact values filed under different keys, with prefixes and "*" beside them.
  const items: unknown[] = [];
  for (let i = 0; i < 30; i++) {
    items.push(deny({ name: `n${i % 5}`, tenant: i % 3 === 0 ? '*' : `t${i}` }));
    items.push(deny({ tenant: `t${i}`, region: i % 2 === 0 ? 'e*' : `eu${i % 4}` }));
  }
  items.push(deny({ region: 'eu*' }), deny({ name: '*' }), deny({ tenant: 't1*' }));
  const unique = [...new Map(items.map((item) => [JSON.stringify(item), item])).values()];
  const s = set(unique);
  const walk = (pairs: Record<string, string>): string | undefined =>
    s.rulesOf('edge').find((rule) =>
      rule.matchers.every((m) => {
        const value = pairs[m.key];
        if (value === undefined) return false;
        if (m.kind === 'any') return true;
        if (m.kind === 'exact') return value === m.value;
        return value.startsWith(m.value.slice(0, -1));
      }),
    )?.id;
  let checked = 0;
  for (let n = 0; n < 6; n++)
    for (let t = 0; t < 32; t += 3)
      for (const region of ['eu0', 'eu1', 'eu3', 'ex', 'us']) {
        const pairs = { name: `n${n}`, tenant: `t${t}`, region };
        expect(ids(pairs, s)).toBe(walk(pairs));
        checked += ids(pairs, s) === undefined ? 0 : 1;
      }
  expect(checked).toBeGreaterThan(100);
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
