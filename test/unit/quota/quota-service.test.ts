// The quota service with one replica: watches, pushes, releases, expiry, reloads and bounds.
import { MemoryLogger } from '../../../src/lib/logger';
import { MIN_DEFAULT_TTL_MS, type BucketAction, type WireUsageReports } from '../../../src/quota';
import { harness, RecordingSink, reports, ruleSet, settle } from './quota-fakes';

const API = { name: 'api', tenant: 'acme' };
const BUDGET_100 = ruleSet('edge', [
  { bucket: { name: 'api', tenant: '*' }, requests_per_unit: 100, unit: 'second' },
  { bucket: { name: 'blocked' }, blanket_rule: 'deny_all' },
  { bucket: { name: 'internal' }, blanket_rule: 'allow_all', assignment_ttl: '1m' },
  { bucket: { name: 'bulk' }, requests_per_unit: 600, unit: 'minute', strategy: 'token_bucket' },
]);

function open(
  h: ReturnType<typeof harness>,
  peer = '127.0.0.1:1',
): { sink: RecordingSink; stream: ReturnType<typeof h.service.openStream> } {
  const sink = new RecordingSink();
  return { sink, stream: h.service.openStream(sink, peer) };
}

test('the first report of a bucket is a watch answered with an assignment', () => {
  const h = harness(BUDGET_100);
  const { sink, stream } = open(h);
  // Envoy's first report of a new bucket: 0 seconds elapsed (whole seconds since it made it).
  stream.receive(reports('edge', [{ bucket: API, elapsedMs: 0, allowed: 1 }]));
  expect(sink.actions).toEqual<BucketAction[]>([
    {
      kind: 'assign',
      bucket: new Map(Object.entries(API)),
      strategy: {
        kind: 'token_bucket',
        maxTokens: 100,
        tokensPerFill: 100,
        fillSeconds: 1,
        fillNanos: 1,
      },
      ttlMs: MIN_DEFAULT_TTL_MS,
    },
  ]);
  // A later report with an unchanged share sends nothing.
  stream.receive(reports('edge', [{ bucket: API, elapsedMs: 500, allowed: 20 }]));
  expect(sink.responses).toHaveLength(1);
  expect(h.stats.snapshot().counters.get('ratelimit.rlqs.edge.name_api.tenant_*.reports')).toBe(2);
});

test('blanket rules and token buckets are assigned as their strategies', () => {
  const h = harness(BUDGET_100);
  const { sink, stream } = open(h);
  stream.receive(
    reports('edge', [
      { bucket: { name: 'blocked' }, elapsedMs: 1 },
      { bucket: { name: 'internal' }, elapsedMs: 1 },
      { bucket: { name: 'bulk' }, elapsedMs: 1 },
    ]),
  );
  expect(sink.actions.map((a) => (a.kind === 'assign' ? [a.strategy, a.ttlMs] : a))).toEqual([
    [{ kind: 'blanket', rule: 'DENY_ALL' }, MIN_DEFAULT_TTL_MS],
    [{ kind: 'blanket', rule: 'ALLOW_ALL' }, 60_000],
    // 600 a minute is 10 a second: 50 tokens every 5 whole seconds, the whole bucket of 600.
    [
      { kind: 'token_bucket', maxTokens: 600, tokensPerFill: 50, fillSeconds: 5, fillNanos: 5 },
      MIN_DEFAULT_TTL_MS,
    ],
  ]);
});

test('a newcomer gets an equal share at once and the others are pushed their smaller one', () => {
  const h = harness(BUDGET_100);
  const a = open(h);
  a.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
  const b = open(h);
  b.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
  expect(b.sink.held(API)).toBe(50);
  expect(a.sink.held(API)).toBe(50);
  const c = open(h);
  c.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
  // A third of 100 is 66 tokens every 2 s as Envoy computes it: 33 a second, never above.
  expect([a.sink.held(API), b.sink.held(API), c.sink.held(API)]).toEqual([33, 33, 33]);
});

test('a share that moves by 5% or less is not pushed; past it, it is', () => {
  const h = harness(BUDGET_100);
  const a = open(h);
  const b = open(h);
  a.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
  b.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
  const sent = a.sink.responses.length;
  // b needs 47 a second: a may have 53 (a change of 3 on 50, 6%): pushed.
  b.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1000, allowed: 47 }]));
  expect(a.sink.held(API)).toBe(53);
  expect(a.sink.responses.length).toBe(sent + 1);
  // b needs 49: a may have 51, 4% under what it holds (and b is raised, not lowered): kept.
  b.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1000, allowed: 49 }]));
  expect(a.sink.held(API)).toBe(53);
});

test('an ended stream frees its share at once; half-closing ends it with OK', async () => {
  const h = harness(BUDGET_100);
  const a = open(h);
  const b = open(h);
  a.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
  b.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
  b.stream.remoteEnded();
  await settle();
  expect(b.sink.ended).toEqual({ status: 'OK', message: '' });
  expect(a.sink.held(API)).toBe(100);
  const c = open(h);
  c.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
  c.stream.closed();
  await settle();
  expect(a.sink.held(API)).toBe(100);
  expect(h.service.openStreams.size).toBe(1);
  expect(h.stats.snapshot().gauges.get('ratelimit.rlqs.streams_open')).toBe(1);
  expect(h.stats.snapshot().gauges.get('ratelimit.rlqs.edge.streams_open')).toBe(1);
});

test('a silent Envoy is abandoned when its TTL passes, and its share goes to the others', async () => {
  const h = harness(BUDGET_100);
  const a = open(h);
  const b = open(h);
  a.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
  b.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
  // b reports once (its interval is known), then goes silent.
  h.clock.advance(3000);
  b.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 3000, allowed: 30 }]));
  for (let t = 0; t < 11; t++) {
    h.clock.advance(3000);
    a.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 3000, allowed: 300 }]));
    await h.service.tick();
  }
  // 33 s without a report from b, past the 30 s TTL.
  expect(b.sink.last(API)).toEqual({ kind: 'abandon', bucket: new Map(Object.entries(API)) });
  expect(a.sink.held(API)).toBe(100);
  expect(h.stats.snapshot().counters.get('ratelimit.rlqs.edge.name_api.tenant_*.abandoned')).toBe(
    1,
  );
});

test('an Envoy reporting every minute keeps its assignment until its first periodic report', async () => {
  const h = harness(BUDGET_100);
  const a = open(h);
  a.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
  for (let t = 0; t < 12; t++) {
    h.clock.advance(5000);
    await h.service.tick();
  }
  // Refreshed every third of its TTL (10 s of the 30 s default), never abandoned meanwhile.
  expect(a.sink.actions.every((action) => action.kind === 'assign')).toBe(true);
  expect(a.sink.responses.length).toBeGreaterThanOrEqual(6);
  a.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 60_000, allowed: 600 }]));
  for (let t = 0; t < 3; t++) {
    h.clock.advance(5000);
    await h.service.tick();
  }
  // The interval seen makes its TTL three of them.
  expect(a.sink.last(API)).toMatchObject({ kind: 'assign', ttlMs: 180_000 });
  // Silent for longer than that once its interval is known: abandoned.
  for (let t = 0; t < 37; t++) {
    h.clock.advance(5000);
    await h.service.tick();
  }
  expect(a.sink.last(API)).toMatchObject({ kind: 'abandon' });
});

test('assignments past a third of their TTL are sent again to Envoys still reporting', async () => {
  const h = harness(BUDGET_100);
  const a = open(h);
  a.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 0 }]));
  h.clock.advance(9000);
  a.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 9000, allowed: 4 }]));
  await h.service.tick();
  expect(a.sink.responses).toHaveLength(1);
  h.clock.advance(1000);
  a.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1000, allowed: 4 }]));
  await h.service.tick();
  expect(a.sink.responses).toHaveLength(2);
});

test('a reload pushes a changed rule at once, abandons a removed one, and leaves the same one alone', () => {
  const h = harness(BUDGET_100);
  const a = open(h);
  a.stream.receive(
    reports('edge', [
      { bucket: API, elapsedMs: 1 },
      { bucket: { name: 'blocked' }, elapsedMs: 1 },
    ]),
  );
  const before = a.sink.responses.length;
  h.service.setRules(BUDGET_100);
  expect(a.sink.responses.length).toBe(before);
  h.service.setRules(
    ruleSet('edge', [
      { bucket: { name: 'api', tenant: '*' }, requests_per_unit: 40, unit: 'second' },
    ]),
  );
  expect(a.sink.responses.at(-1)).toEqual<BucketAction[]>([
    { kind: 'abandon', bucket: new Map([['name', 'blocked']]) },
    {
      kind: 'assign',
      bucket: new Map(Object.entries(API)),
      // 40 a second: 80 tokens every 2 whole seconds.
      strategy: {
        kind: 'token_bucket',
        maxTokens: 40,
        tokensPerFill: 80,
        fillSeconds: 2,
        fillNanos: 2,
      },
      ttlMs: MIN_DEFAULT_TTL_MS,
    },
  ]);
  // Counted under the removed rule, whose handles the new configuration no longer binds.
  expect(h.stats.snapshot().counters.get('ratelimit.rlqs.edge.name_blocked.abandoned')).toBe(1);
});

test('a bucket no rule governs gets nothing, is counted, and is assigned once a rule arrives', () => {
  const h = harness(BUDGET_100);
  const a = open(h);
  a.stream.receive(reports('edge', [{ bucket: { name: 'web' }, elapsedMs: 1 }]));
  a.stream.receive(reports('edge', [{ bucket: { name: 'web' }, elapsedMs: 200, allowed: 3 }]));
  expect(a.sink.responses).toEqual([]);
  expect(h.stats.snapshot().counters.get('ratelimit.rlqs.edge.buckets_without_rule')).toBe(2);
  h.service.setRules(ruleSet('edge', [{ bucket: { name: 'web' }, blanket_rule: 'deny_all' }]));
  expect(a.sink.held({ name: 'web' })).toBe(0);
  // A domain no rule names: its usages are refused, the stream goes on, nothing is watched.
  const b = open(h);
  b.stream.receive(reports('nowhere', [{ bucket: { name: 'web' }, elapsedMs: 0 }]));
  expect(h.stats.snapshot().counters.get('ratelimit.rlqs.usages_refused')).toBe(1);
  expect(b.stream.buckets.size).toBe(0);
  expect(b.sink.responses).toEqual([]);
  expect(b.sink.ended).toBeUndefined();
});

test('a stream watches at most maxBucketsPerStream buckets; the rest are counted', () => {
  const h = harness(BUDGET_100, { limits: { maxBucketsPerStream: 2 } });
  const a = open(h);
  a.stream.receive(
    reports(
      'edge',
      ['x', 'y', 'z'].map((tenant) => ({ bucket: { name: 'api', tenant }, elapsedMs: 1 })),
    ),
  );
  expect(a.sink.actions).toHaveLength(2);
  expect(a.stream.buckets.size).toBe(2);
  expect(h.stats.snapshot().counters.get('ratelimit.rlqs.edge.buckets_refused')).toBe(1);
});

test('while the peer does not read, what is due waits, one entry per bucket, latest share', async () => {
  const h = harness(BUDGET_100);
  const a = open(h);
  a.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
  a.sink.isReading = false;
  const others = [open(h), open(h), open(h)];
  for (const o of others) o.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
  expect(a.sink.responses).toHaveLength(1);
  a.sink.isReading = true;
  await h.service.tick();
  expect(a.sink.responses).toHaveLength(2);
  expect(a.sink.responses[1]).toHaveLength(1);
  expect(a.sink.held(API)).toBe(25);
});

describe('what Envoy sends is taken; a usage that would hurt is refused alone', () => {
  test("Envoy's first report (0 s, or none) is a watch; a report without usages keeps the stream", async () => {
    const h = harness(BUDGET_100);
    const a = open(h);
    a.stream.receive({ domain: 'edge', bucketQuotaUsages: [{ bucketId: { bucket: API } }] });
    expect(a.sink.held(API)).toBe(100);
    // After an abandon leaves it no bucket, Envoy's tick sends the domain and nothing else.
    a.stream.receive({ domain: 'edge' });
    a.stream.receive({ domain: 'edge', bucketQuotaUsages: [] });
    await settle();
    expect(a.sink.ended).toBeUndefined();
    expect(h.service.openStreams.size).toBe(1);
  });

  it.each<[string, WireUsageReports]>([
    [
      'bucket_quota_usages[0].bucket_id: is required',
      { domain: 'edge', bucketQuotaUsages: [{ timeElapsed: { seconds: 1 } }] },
    ],
    [
      'bucket_quota_usages[0].bucket_id.bucket: needs at least one key and value',
      reports('edge', [{ bucket: {}, elapsedMs: 1000 }]),
    ],
    [
      'bucket_quota_usages[0].bucket_id.bucket["name"]: is empty',
      reports('edge', [{ bucket: { name: '' }, elapsedMs: 1000 }]),
    ],
    [
      'bucket_quota_usages[0].bucket_id.bucket: has an empty key',
      reports('edge', [{ bucket: { '': 'x' }, elapsedMs: 1000 }]),
    ],
    [
      'bucket_quota_usages[0].time_elapsed: must not be negative',
      {
        domain: 'edge',
        bucketQuotaUsages: [{ bucketId: { bucket: API }, timeElapsed: { seconds: -5 } }],
      },
    ],
    [
      'bucket_quota_usages[0].num_requests_allowed: with num_requests_denied counts 18014398509481984 requests, past 2^53',
      reports('edge', [{ bucket: API, elapsedMs: 1000, allowed: 2 ** 53, denied: 2 ** 53 }]),
    ],
  ])('%s', async (reason, message) => {
    const logger = new MemoryLogger();
    const h = harness(BUDGET_100, { logger });
    const a = open(h);
    const good = {
      bucketId: { bucket: { name: 'api', tenant: 'ok' } },
      timeElapsed: { seconds: 0 },
    };
    const refused = { ...message, bucketQuotaUsages: [...(message.bucketQuotaUsages ?? []), good] };
    a.stream.receive(refused);
    a.stream.receive(refused);
    await settle();
    // The stream goes on, the good usage is assigned, the bad one is not watched.
    expect(a.sink.ended).toBeUndefined();
    expect(a.sink.held({ name: 'api', tenant: 'ok' })).toBe(100);
    expect(a.stream.buckets.size).toBe(1);
    expect(h.stats.snapshot().counters.get('ratelimit.rlqs.usages_refused')).toBe(2);
    // Told once per stream, at info, with the reason.
    expect(logger.lines).toEqual([
      {
        level: 'info',
        message: 'quota report usages refused',
        fields: { stream: a.stream.id, peer: '127.0.0.1:1', reason, usages: 1 },
      },
    ]);
  });

  test("a first message without a domain (never Envoy's) ends the stream INVALID_ARGUMENT", async () => {
    const logger = new MemoryLogger();
    const h = harness(BUDGET_100, { logger });
    const a = open(h);
    a.stream.receive(reports('', [{ bucket: API, elapsedMs: 0 }]));
    await settle();
    expect(a.sink.ended).toEqual({
      status: 'INVALID_ARGUMENT',
      message: 'domain: must not be empty',
    });
    expect(h.service.openStreams.size).toBe(0);
    expect(h.stats.snapshot().counters.get('ratelimit.rlqs.invalid_reports')).toBe(1);
    expect(logger.lines.map((l) => [l.level, l.message, l.fields?.reason])).toEqual([
      ['info', 'quota stream refused', 'domain: must not be empty'],
    ]);
  });

  test('a later report may leave the domain out, but not change it', () => {
    const h = harness(BUDGET_100);
    const a = open(h);
    a.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
    a.stream.receive(reports('', [{ bucket: API, elapsedMs: 300 }]));
    expect(a.sink.ended).toBeUndefined();
    a.stream.receive(reports('other', [{ bucket: API, elapsedMs: 300 }]));
    expect(a.sink.ended?.status).toBe('INVALID_ARGUMENT');
    expect(a.sink.ended?.message).toMatch(/^domain: this stream serves "edge"/);
  });
});

test('closing ends every stream UNAVAILABLE and refuses new ones', async () => {
  const h = harness(BUDGET_100);
  const a = open(h);
  a.stream.receive(reports('edge', [{ bucket: API, elapsedMs: 1 }]));
  await h.service.close();
  expect(a.sink.ended?.status).toBe('UNAVAILABLE');
  const b = open(h);
  expect(b.sink.ended?.status).toBe('UNAVAILABLE');
  expect(h.service.openStreams.size).toBe(0);
});
