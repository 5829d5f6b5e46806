// quota_buckets of a RateLimitConfig resource: read into the rules a file's list gives, with the
// file's checks, and refused naming the resource and the item.
import protobuf from 'protobufjs';
import {
  compileSources,
  ConfigError,
  parseConfigFile,
  type ConfigDocument,
} from '../../../src/config';
import { messageType, RATE_LIMIT_CONFIG } from '../../../src/lib/proto';
import { decodeResource, RATE_LIMIT_CONFIG_TYPE_URL } from '../../../src/provider';
import { goDuration } from '../../../src/provider/xds/quota-resource';
import { StatsStore } from '../../../src/stats';

/** A resource encoded from its JSON form (camelCase fields, enum names as strings). */
function encoded(config: Record<string, unknown>): { type_url: string; value: Uint8Array } {
  const type = messageType(RATE_LIMIT_CONFIG.file, RATE_LIMIT_CONFIG.name);
  return {
    type_url: RATE_LIMIT_CONFIG_TYPE_URL,
    value: type.encode(type.fromObject(config)).finish(),
  };
}

function decoded(config: Record<string, unknown>): ConfigDocument {
  const doc = decodeResource(encoded(config), 0);
  if (doc instanceof ConfigError) throw doc;
  return doc;
}

function refusal(...rules: Record<string, unknown>[]): ConfigError {
  const doc = decodeResource(encoded({ name: 'edge', domain: 'edge', quotaBuckets: rules }), 0);
  if (!(doc instanceof ConfigError)) throw new Error('accepted');
  return doc;
}

const API = { bucket: { name: 'api' } };

it('reads every field of a rule', () => {
  const doc = decoded({
    name: 'edge',
    domain: 'edge',
    quotaBuckets: [
      {
        bucket: { tenant: 'ac*', name: 'api' },
        requestsPerUnit: { value: 100 },
        unit: 'MINUTE',
        strategy: 'TOKEN_BUCKET',
        maxTokens: { value: 250 },
        assignmentTtl: { seconds: 30, nanos: 500_000_000 },
      },
      { bucket: { name: 'open' }, blanketRule: 'ALLOW_ALL', assignmentTtl: { seconds: 25 } },
      { bucket: { name: 'blocked' }, blanketRule: 'DENY_ALL' },
    ],
  });
  expect(doc.quotaBuckets).toEqual([
    {
      domain: 'edge',
      source: 'resource edge',
      id: 'name=api,tenant=ac*',
      matchers: [
        { key: 'name', value: 'api', kind: 'exact' },
        { key: 'tenant', value: 'ac*', kind: 'prefix' },
      ],
      policy: {
        kind: 'budget',
        strategy: 'token_bucket',
        requestsPerUnit: 100,
        unit: 'MINUTE',
        maxTokens: 250,
      },
      assignmentTtlMs: 30_500,
      path: 'quota_buckets[0]',
    },
    {
      domain: 'edge',
      source: 'resource edge',
      id: 'name=open',
      matchers: [{ key: 'name', value: 'open', kind: 'exact' }],
      policy: { kind: 'blanket', rule: 'allow_all' },
      assignmentTtlMs: 25_000,
      path: 'quota_buckets[1]',
    },
    {
      domain: 'edge',
      source: 'resource edge',
      id: 'name=blocked',
      matchers: [{ key: 'name', value: 'blocked', kind: 'exact' }],
      policy: { kind: 'blanket', rule: 'deny_all' },
      assignmentTtlMs: undefined,
      path: 'quota_buckets[2]',
    },
  ]);
});

it('reads what is left unset as a file without the key: the defaults', () => {
  const doc = decoded({
    domain: 'edge',
    quotaBuckets: [
      { bucket: { name: 'api', tenant: '*' }, requestsPerUnit: { value: 10 }, unit: 'SECOND' },
      {
        bucket: { name: 'tb' },
        requestsPerUnit: { value: 7 },
        unit: 'DAY',
        strategy: 'TOKEN_BUCKET',
      },
    ],
  });
  expect(doc.source).toBe('resource #1');
  expect(doc.quotaBuckets?.map((r) => [r.id, r.policy, r.assignmentTtlMs])).toEqual([
    [
      'name=api,tenant=*',
      {
        kind: 'budget',
        strategy: 'token_bucket',
        requestsPerUnit: 10,
        unit: 'SECOND',
        maxTokens: 10,
      },
      undefined,
    ],
    [
      'name=tb',
      { kind: 'budget', strategy: 'token_bucket', requestsPerUnit: 7, unit: 'DAY', maxTokens: 7 },
      undefined,
    ],
  ]);
});

it('leaves quotaBuckets out of a resource without rules, as of a file without the key', () => {
  expect('quotaBuckets' in decoded({ name: 'plain', domain: 'plain' })).toBe(false);
});

it('reads the rules a file gives from the same rules as a resource', () => {
  const file = parseConfigFile(
    'edge.yaml',
    [
      'domain: edge',
      'quota_buckets:',
      "  - bucket: { name: api, tenant: '*' }",
      '    requests_per_unit: 100',
      '    unit: second',
      '    strategy: token_bucket',
      '    max_tokens: 300',
      '    assignment_ttl: 1m30s',
      '  - bucket: { name: api, tenant: blocked }',
      '    blanket_rule: deny_all',
      '',
    ].join('\n'),
  );
  if (file instanceof ConfigError) throw file;
  const resource = decoded({
    name: 'edge',
    domain: 'edge',
    quotaBuckets: [
      {
        bucket: { name: 'api', tenant: '*' },
        requestsPerUnit: { value: 100 },
        unit: 'SECOND',
        strategy: 'TOKEN_BUCKET',
        maxTokens: { value: 300 },
        assignmentTtl: { seconds: 90 },
      },
      { bucket: { name: 'api', tenant: 'blocked' }, blanketRule: 'DENY_ALL' },
    ],
  });
  const bare = (doc: ConfigDocument) => doc.quotaBuckets?.map((r) => ({ ...r, source: '' }));
  expect(bare(resource)).toEqual(bare(file));
});

it('reads the extension by its field numbers, as another implementation of the proto writes it', () => {
  const rule = protobuf.Writer.create();
  // bucket (1): map entry { key (1), value (2) }
  const entry = protobuf.Writer.create()
    .uint32((1 << 3) | 2)
    .string('name')
    .uint32((2 << 3) | 2)
    .string('api')
    .finish();
  rule.uint32((1 << 3) | 2).bytes(entry);
  const rpu = protobuf.Writer.create()
    .uint32((1 << 3) | 0)
    .uint32(40)
    .finish();
  rule.uint32((2 << 3) | 2).bytes(rpu); // requests_per_unit (2): UInt32Value
  rule.uint32((3 << 3) | 0).int32(3); // unit (3): HOUR
  rule.uint32((4 << 3) | 0).int32(2); // strategy (4): TOKEN_BUCKET
  const max = protobuf.Writer.create()
    .uint32((1 << 3) | 0)
    .uint32(80)
    .finish();
  rule.uint32((5 << 3) | 2).bytes(max); // max_tokens (5): UInt32Value
  const ttl = protobuf.Writer.create()
    .uint32((1 << 3) | 0)
    .int64(24)
    .finish();
  rule.uint32((6 << 3) | 2).bytes(ttl); // assignment_ttl (6): Duration { seconds (1) }
  const config = protobuf.Writer.create();
  config.uint32((2 << 3) | 2).string('edge');
  config.uint32((1000 << 3) | 2).bytes(rule.finish()); // quota_buckets (1000)
  const blanket = protobuf.Writer.create()
    .uint32((1 << 3) | 2)
    .bytes(entry)
    .uint32((7 << 3) | 0)
    .int32(2) // blanket_rule (7): DENY_ALL
    .finish();
  const other = protobuf.Writer.create()
    .uint32((2 << 3) | 2)
    .string('edge2')
    .uint32((1000 << 3) | 2)
    .bytes(blanket)
    .finish();
  const doc = decodeResource({ type_url: RATE_LIMIT_CONFIG_TYPE_URL, value: config.finish() }, 0);
  const doc2 = decodeResource({ type_url: RATE_LIMIT_CONFIG_TYPE_URL, value: other }, 1);
  expect([doc, doc2].map((d) => (d as ConfigDocument).quotaBuckets?.[0])).toMatchObject([
    {
      id: 'name=api',
      policy: { strategy: 'token_bucket', requestsPerUnit: 40, unit: 'HOUR', maxTokens: 80 },
      assignmentTtlMs: 24_000,
    },
    { id: 'name=api', policy: { kind: 'blanket', rule: 'deny_all' } },
  ]);
});

describe('a bad rule refuses the resource, naming it and the item', () => {
  it.each<[string, Record<string, unknown>[], string]>([
    [
      'a week',
      [
        { ...API, blanketRule: 'ALLOW_ALL' },
        { bucket: { name: 'w' }, requestsPerUnit: { value: 1 }, unit: 'WEEK' },
      ],
      "resource edge: config error, unit week: Envoy's RateLimitUnit has no week; use day with a seventh of the budget (at quota_buckets[1].unit)",
    ],
    [
      'a budget without a unit',
      [{ ...API, requestsPerUnit: { value: 5 } }],
      "resource edge: config error, an item of quota_buckets needs 'requests_per_unit' and 'unit', or 'blanket_rule' (at quota_buckets[0])",
    ],
    [
      'a budget beside a blanket rule',
      [{ ...API, blanketRule: 'DENY_ALL', requestsPerUnit: { value: 0 } }],
      "resource edge: config error, 'requests_per_unit' has no meaning beside 'blanket_rule' (at quota_buckets[0].requests_per_unit)",
    ],
    [
      'requests_per_time_unit, which Envoy ignores',
      [
        {
          ...API,
          requestsPerUnit: { value: 5 },
          unit: 'SECOND',
          strategy: 'REQUESTS_PER_TIME_UNIT',
        },
      ],
      "resource edge: config error, strategy requests_per_time_unit: Envoy's rate_limit_quota filter ignores it (it logs that the strategy is not yet supported and the bucket keeps whatever it held, no_assignment_behavior at first, so the budget is not applied); leave 'strategy' out or write token_bucket (at quota_buckets[0].strategy)",
    ],
    [
      'a budget of 0 (a wrapper whose value is 0 arrives empty)',
      [{ ...API, requestsPerUnit: {}, unit: 'HOUR' }],
      'resource edge: config error, a token bucket needs requests_per_unit above 0 (use blanket_rule: deny_all) (at quota_buckets[0].requests_per_unit)',
    ],
    [
      'a max_tokens of 0',
      [
        {
          ...API,
          requestsPerUnit: { value: 5 },
          unit: 'SECOND',
          strategy: 'TOKEN_BUCKET',
          maxTokens: {},
        },
      ],
      'resource edge: config error, \'max_tokens\' must be a whole number from 1 to 4294967295, got "0" (at quota_buckets[0].max_tokens)',
    ],
    [
      'no bucket',
      [{ blanketRule: 'ALLOW_ALL' }],
      "resource edge: config error, each item of quota_buckets needs 'bucket' (at quota_buckets[0])",
    ],
    [
      'an empty value',
      [{ bucket: { name: '' }, blanketRule: 'ALLOW_ALL' }],
      'resource edge: config error, bucket key \'name\' needs a value, got "" (at quota_buckets[0].bucket.name)',
    ],
    [
      'a * inside a value',
      [{ bucket: { name: 'a*b' }, blanketRule: 'ALLOW_ALL' }],
      'resource edge: config error, bucket value "a*b": * may only end a value (a prefix) or be the whole value (at quota_buckets[0].bucket.name)',
    ],
    [
      'a TTL longer than 30 minutes',
      [{ ...API, blanketRule: 'ALLOW_ALL', assignmentTtl: { seconds: 1800, nanos: 500_000_000 } }],
      'resource edge: config error, \'assignment_ttl\' must be a duration from 20s to 1800s (30m) such as 30s or 2m, got "1800.5s" (at quota_buckets[0].assignment_ttl)',
    ],
    [
      'a strategy this service does not know',
      [{ ...API, requestsPerUnit: { value: 5 }, unit: 'SECOND', strategy: 7 }],
      'resource edge: config error, \'strategy\' must be one of token_bucket, got "7" (at quota_buckets[0].strategy)',
    ],
    [
      'one bucket twice',
      [
        { bucket: { name: 'api', tenant: '*' }, blanketRule: 'ALLOW_ALL' },
        { bucket: { tenant: '*', name: 'api' }, blanketRule: 'DENY_ALL' },
      ],
      'resource edge: config error, bucket {name=api,tenant=*} is already the bucket of quota_buckets[0] (at quota_buckets[1].bucket)',
    ],
  ])('%s', (_what, rules, message) => {
    expect(refusal(...rules).message).toBe(message);
  });
});

it('refuses one bucket in two resources of a domain when they are merged, naming both', () => {
  const rule = { bucket: { name: 'api' }, blanketRule: 'DENY_ALL' };
  const outcome = compileSources(
    ['a', 'b'].map((name, i) =>
      decodeResource(encoded({ name, domain: 'edge', quotaBuckets: [rule] }), i),
    ),
    { stats: new StatsStore(), mergeDomainConfig: true, sanitizeDots: false },
  );
  expect(outcome.ok ? [] : outcome.errors.map((e) => e.message)).toEqual([
    "resource b: config error, bucket {name=api} of domain 'edge' at quota_buckets[0] is already the bucket of quota_buckets[0] in resource a",
  ]);
});

it('compiles the rules of a resource into the snapshot', () => {
  const outcome = compileSources(
    [
      decodeResource(
        encoded({
          name: 'edge',
          domain: 'edge',
          quotaBuckets: [
            { bucket: { name: 'api' }, requestsPerUnit: { value: 3 }, unit: 'SECOND' },
          ],
        }),
        0,
      ),
    ],
    { stats: new StatsStore(), mergeDomainConfig: false, sanitizeDots: false },
  );
  if (!outcome.ok) throw new Error(outcome.errors.join('\n'));
  const rule = outcome.snapshot.quotaRules.match('edge', new Map([['name', 'api']]));
  expect([rule?.id, rule?.source]).toEqual(['name=api', 'resource edge']);
});

it('writes a Duration as a Go duration', () => {
  expect(
    [
      {},
      { seconds: 30 },
      { seconds: 1, nanos: 5 },
      { seconds: -2, nanos: -250_000_000 },
      { nanos: -1 },
    ].map(goDuration),
  ).toEqual(['0s', '30s', '1.000000005s', '-2.25s', '-0.000000001s']);
});
