// The quota service bounded in total and cheap per report: process-wide caps shared fairly
// between peers, what passes one refused alone (a new stream RESOURCE_EXHAUSTED naming the
// setting, a usage left out while the rest of its report is served), a crowded bucket shared
// out once a turn or a tick, and a reload over many watched buckets done a part per turn.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Bucket, type QuotaStream } from '../../../src/quota';
import { INLINE_CLAIMS } from '../../../src/quota/recompute';
import { silentLogger } from '../../../src/lib/logger';
import { harness, RecordingSink, reports, ruleSet } from './quota-fakes';

const RULES = ruleSet('edge', [
  { bucket: { name: 'api', tenant: '*' }, requests_per_unit: 100, unit: 'second' },
]);
const API = { name: 'api', tenant: 'acme' };

type H = ReturnType<typeof harness>;

function open(h: H, peer = '127.0.0.1:1'): { sink: RecordingSink; stream: QuotaStream } {
  const sink = new RecordingSink();
  return { sink, stream: h.service.openStream(sink, peer) };
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
  open(h, '10.0.0.2:1');
  const c = open(h);
  expect(c.sink.ended).toEqual({
    status: 'RESOURCE_EXHAUSTED',
    message:
      'this server holds 2 of 2 quota streams and this peer 1, past its share (RLQS_MAX_STREAMS)',
  });
  expect(h.stats.counter('ratelimit.rlqs.refused.max_streams').value).toBe(1);
  expect(h.service.openStreams.size).toBe(2);
  a.stream.closed();
  expect(open(h).sink.ended).toBeUndefined();
});

test('past half of RLQS_MAX_STREAMS a peer opens more only within its thirty-second; a newcomer opens its share', () => {
  const h = harness(RULES, { limits: { maxStreams: 64 } });
  // One peer opens all it can: half of the bound, then its share is what it holds already.
  const hostile = Array.from({ length: 64 }, (_, i) => open(h, `10.0.0.1:${1000 + i}`));
  expect(hostile.filter((e) => e.sink.ended === undefined)).toHaveLength(32);
  expect(hostile.at(-1)?.sink.ended?.message).toContain('past its share (RLQS_MAX_STREAMS)');
  // Each of 16 other peers still opens its share (64 / 32 = 2 streams), and no more.
  for (let p = 2; p < 18; p++) {
    const [x, y, z] = [1, 2, 3].map((port) => open(h, `10.0.0.${p}:${port}`));
    expect([x?.sink.ended, y?.sink.ended]).toEqual([undefined, undefined]);
    expect(z?.sink.ended?.status).toBe('RESOURCE_EXHAUSTED');
  }
  expect(h.service.openStreams.size).toBe(64);
});

test('a report past RLQS_MAX_BUCKETS refuses those usages alone: the stream and its other buckets are served', () => {
  const h = harness(RULES, { limits: { maxBuckets: 3 } });
  const a = open(h);
  watch(a.stream, tenants('x', 'y'));
  const b = open(h, '10.0.0.2:1');
  watch(b.stream, tenants('x', 'z'));
  expect(b.sink.ended).toBeUndefined();
  expect(a.sink.ended).toBeUndefined();
  // b's watch of x was taken (the bound's third), z was refused: b holds x's half.
  expect(b.sink.held({ name: 'api', tenant: 'x' })).toBe(50);
  expect(b.sink.held({ name: 'api', tenant: 'z' })).toBeUndefined();
  expect(h.service.watchCounts).toEqual({ watches: 3, withoutRule: 0, peers: 2 });
  expect(h.stats.counter('ratelimit.rlqs.refused.max_buckets').value).toBe(1);
  b.stream.closed();
  // Past half of the bound, a's peer holds more than its share; another peer takes the room.
  watch(a.stream, tenants('v'));
  watch(open(h, '10.0.0.3:1').stream, tenants('w'));
  expect(h.service.watchCounts).toEqual({ watches: 3, withoutRule: 0, peers: 2 });
});

test('a peer past its share of RLQS_MAX_BUCKETS is refused first; a newcomer gets its share', () => {
  const h = harness(RULES, { limits: { maxBuckets: 64, maxBucketsPerStream: 1000 } });
  const hostile = open(h, '10.0.0.1:1');
  watch(hostile.stream, tenants(...Array.from({ length: 100 }, (_, i) => `h${i}`)));
  expect(h.service.watchCounts.watches).toBe(32);
  const innocent = open(h, '10.0.0.2:1');
  watch(innocent.stream, tenants('i1', 'i2', 'i3'));
  expect(innocent.sink.held({ name: 'api', tenant: 'i1' })).toBe(100);
  expect(innocent.sink.held({ name: 'api', tenant: 'i2' })).toBe(100);
  // Its share is 2 of 64: the third waits, as the hostile peer's 68 usages past half did.
  expect(innocent.sink.held({ name: 'api', tenant: 'i3' })).toBeUndefined();
  expect(h.stats.counter('ratelimit.rlqs.refused.max_buckets').value).toBe(68 + 1);
  expect([hostile.sink.ended, innocent.sink.ended]).toEqual([undefined, undefined]);
});

test('buckets without a rule have a bound of their own that costs a ruled bucket nothing', () => {
  const h = harness(RULES, { limits: { maxBucketsWithoutRule: 1, maxBuckets: 1 } });
  const a = open(h);
  watch(a.stream, [{ name: 'web' }]);
  watch(a.stream, [{ name: 'other' }, { name: 'api', tenant: 'x' }]);
  expect(a.sink.ended).toBeUndefined();
  expect(a.sink.held({ name: 'api', tenant: 'x' })).toBe(100);
  expect(h.stats.counter('ratelimit.rlqs.refused.max_buckets_without_rule').value).toBe(1);
  expect(h.service.watchCounts).toEqual({ watches: 1, withoutRule: 1, peers: 1 });
  a.stream.closed();
  expect(h.service.watchCounts).toEqual({ watches: 0, withoutRule: 0, peers: 0 });
});

test('a reload that gives a bucket a rule counts its watches again', async () => {
  const h = harness(RULES);
  watch(open(h).stream, [{ name: 'web' }, { name: 'web', tenant: 'x' }]);
  expect(h.service.watchCounts).toEqual({ watches: 0, withoutRule: 2, peers: 1 });
  h.service.setRules(ruleSet('edge', [{ bucket: { name: 'web' }, blanket_rule: 'deny_all' }]));
  await nextTurn();
  expect(h.service.watchCounts).toEqual({ watches: 2, withoutRule: 0, peers: 1 });
});

test('an id past RLQS_MAX_BUCKET_ID_BYTES is refused alone, counted, logged once per stream naming the setting', () => {
  const lines: unknown[] = [];
  const logger = {
    ...silentLogger,
    info: (message: string, fields?: unknown) => lines.push([message, fields]),
  };
  const h = harness(RULES, { logger });
  const a = open(h);
  const oversized = { oversizedBucketId: { bytes: 61_500, max: 1024 } };
  for (let tick = 0; tick < 3; tick++)
    a.stream.receive({
      domain: 'edge',
      bucketQuotaUsages: [
        oversized,
        ...(reports('edge', [{ bucket: API, elapsedMs: 0 }]).bucketQuotaUsages ?? []),
      ],
    });
  expect(a.sink.ended).toBeUndefined();
  expect(a.sink.held(API)).toBe(100);
  expect(h.stats.counter('ratelimit.rlqs.refused.max_bucket_id_bytes').value).toBe(3);
  expect(lines).toHaveLength(1);
  expect(JSON.stringify(lines[0])).toContain('past RLQS_MAX_BUCKET_ID_BYTES (1024)');
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
