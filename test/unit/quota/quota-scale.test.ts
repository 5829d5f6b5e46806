// The quota service bounded in total and cheap per report: process-wide caps refused with
// RESOURCE_EXHAUSTED naming the setting, a crowded bucket shared out once a turn or a tick,
// and a reload over many watched buckets done a part per turn.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Bucket, type QuotaStream } from '../../../src/quota';
import { INLINE_CLAIMS } from '../../../src/quota/recompute';
import { harness, RecordingSink, reports, ruleSet } from './quota-fakes';

const RULES = ruleSet('edge', [
  { bucket: { name: 'api', tenant: '*' }, requests_per_unit: 100, unit: 'second' },
]);
const API = { name: 'api', tenant: 'acme' };

type H = ReturnType<typeof harness>;

function open(h: H): { sink: RecordingSink; stream: QuotaStream } {
  const sink = new RecordingSink();
  return { sink, stream: h.service.openStream(sink, '127.0.0.1:1') };
}

function watch(stream: QuotaStream, buckets: Record<string, string>[]): void {
  stream.receive(
    reports(
      'edge',
      buckets.map((bucket) => ({ bucket, elapsedMs: 1 })),
    ),
  );
}

const tenants = (...names: string[]): Record<string, string>[] =>
  names.map((tenant) => ({ name: 'api', tenant }));

afterEach(() => {
  jest.restoreAllMocks();
});

test('a stream past RLQS_MAX_STREAMS is refused RESOURCE_EXHAUSTED; a closed one makes room', () => {
  const h = harness(RULES, { limits: { maxStreams: 2 } });
  const a = open(h);
  open(h);
  const c = open(h);
  expect(c.sink.ended).toEqual({
    status: 'RESOURCE_EXHAUSTED',
    message: 'this server holds 2 quota streams, its limit (RLQS_MAX_STREAMS)',
  });
  expect(h.service.openStreams.size).toBe(2);
  a.stream.closed();
  expect(open(h).sink.ended).toBeUndefined();
});

test('the stream whose report passes RLQS_MAX_BUCKETS ends; the others keep their watches', () => {
  const h = harness(RULES, { limits: { maxBuckets: 3 } });
  const a = open(h);
  watch(a.stream, tenants('x', 'y'));
  const b = open(h);
  watch(b.stream, tenants('x', 'z'));
  expect(b.sink.ended).toEqual({
    status: 'RESOURCE_EXHAUSTED',
    message: "this server's quota streams watch 3 buckets, its limit (RLQS_MAX_BUCKETS)",
  });
  expect(a.sink.ended).toBeUndefined();
  // b's one watch went with it: a holds the whole budget of x again.
  expect(a.sink.held({ name: 'api', tenant: 'x' })).toBe(100);
  expect(h.service.watchCounts).toEqual({ watches: 2, withoutRule: 0 });
  watch(open(h).stream, tenants('w'));
  expect(h.service.watchCounts.watches).toBe(3);
});

test('buckets without a rule have a bound of their own, RLQS_MAX_BUCKETS_WITHOUT_RULE', () => {
  const h = harness(RULES, { limits: { maxBucketsWithoutRule: 1 } });
  const a = open(h);
  watch(a.stream, [{ name: 'web' }]);
  watch(a.stream, tenants('x'));
  expect(a.sink.ended).toBeUndefined();
  watch(a.stream, [{ name: 'other' }]);
  expect(a.sink.ended?.status).toBe('RESOURCE_EXHAUSTED');
  expect(a.sink.ended?.message).toContain('(RLQS_MAX_BUCKETS_WITHOUT_RULE)');
  expect(h.service.watchCounts).toEqual({ watches: 0, withoutRule: 0 });
});

test('a reload that gives a bucket a rule counts its watches again', async () => {
  const h = harness(RULES);
  watch(open(h).stream, [{ name: 'web' }, { name: 'web', tenant: 'x' }]);
  expect(h.service.watchCounts).toEqual({ watches: 2, withoutRule: 2 });
  h.service.setRules(ruleSet('edge', [{ bucket: { name: 'web' }, blanket_rule: 'deny_all' }]));
  await nextTurn();
  expect(h.service.watchCounts).toEqual({ watches: 2, withoutRule: 0 });
});

test('a crowded bucket is shared out once a turn for watches, and at the tick for demand', async () => {
  const h = harness(RULES, { limits: { maxStreams: 10_000 } });
  const spy = jest.spyOn(Bucket.prototype, 'reallocate');
  const envoys = Array.from({ length: INLINE_CLAIMS + 100 }, () => open(h));
  for (const e of envoys) watch(e.stream, [API]);
  // The first INLINE_CLAIMS watches are shared out at once, the 100 after them once, after the turn.
  expect(spy).toHaveBeenCalledTimes(INLINE_CLAIMS);
  await nextTurn();
  expect(spy).toHaveBeenCalledTimes(INLINE_CLAIMS + 1);
  const total = envoys.reduce((sum, e) => sum + (e.sink.held(API) ?? NaN), 0);
  expect(total).toBeLessThanOrEqual(100);
  expect(envoys.every((e) => e.sink.held(API) !== undefined)).toBe(true);
  // Demand reports of every Envoy: nothing is shared out until the tick, which does it once.
  spy.mockClear();
  for (const e of envoys)
    e.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1000, allowed: 1 }]));
  await nextTurn();
  expect(spy).not.toHaveBeenCalled();
  await h.service.tick();
  expect(spy).toHaveBeenCalledTimes(1);
  // One Envoy leaving (its stream closed) is shared out after the turn too.
  spy.mockClear();
  envoys[0]?.stream.closed();
  envoys[1]?.stream.closed();
  expect(spy).not.toHaveBeenCalled();
  await nextTurn();
  expect(spy).toHaveBeenCalledTimes(1);
});

test('a reload over many watched buckets is done a part per turn, the latest rules winning', async () => {
  const h = harness(RULES, { limits: { maxBucketsPerStream: 10_000 } });
  const a = open(h);
  const names = Array.from({ length: 6000 }, (_, i) => `t${i}`);
  for (let i = 0; i < names.length; i += 1000)
    watch(a.stream, tenants(...names.slice(i, i + 1000)));
  const budget = (n: number): ReturnType<typeof ruleSet> =>
    ruleSet('edge', [
      { bucket: { name: 'api', tenant: '*' }, requests_per_unit: n, unit: 'second' },
    ]);
  /** How many buckets were last assigned a token bucket of `n` a second (one pass over what was sent). */
  const held = (n: number): number => {
    const last = new Map<string | undefined, number>();
    for (const action of a.sink.actions)
      if (action.kind === 'assign' && action.strategy.kind === 'token_bucket')
        last.set(
          action.bucket.get('tenant'),
          action.strategy.tokensPerFill / action.strategy.fillSeconds,
        );
    return [...last.values()].filter((v) => v === n).length;
  };
  h.service.setRules(budget(50));
  const first = held(50);
  expect(first).toBeGreaterThan(0);
  expect(first).toBeLessThan(names.length);
  // A second reload before the first is done: the rest go straight to the latest budget.
  h.service.setRules(budget(70));
  for (let turn = 0; turn < 10 && held(70) < names.length; turn++) await nextTurn();
  expect(held(70)).toBe(names.length);
});
