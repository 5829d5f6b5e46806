// RLQS messages in protobuf: our api/ copies against Envoy's own protos (bundled with
// @grpc/grpc-js-xds), field by field and byte for byte, both ways.
import { existsSync } from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';
import { API_DIR } from '../../../src/lib/proto';
import {
  decodeReports,
  encodeResponse,
  RLQS_PROTO,
  UndecodableReport,
  type BucketAction,
} from '../../../src/quota';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const DEPS = path.join(ROOT, 'node_modules', '@grpc', 'grpc-js-xds', 'deps');
const UPSTREAM_DIRS = [
  ...['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => path.join(DEPS, d)),
  path.join(ROOT, 'node_modules', 'protobufjs'),
];

function load(file: string, dirs: readonly string[]): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    for (const dir of dirs) {
      const candidate = path.join(dir, target);
      if (existsSync(candidate)) return candidate;
    }
    return target;
  };
  root.loadSync(file, { keepCase: true });
  root.resolveAll();
  return root;
}

const ours = load(RLQS_PROTO, [API_DIR]);
const upstream = load(RLQS_PROTO, UPSTREAM_DIRS);
const PKG = 'envoy.service.rate_limit_quota.v3';

test.each([
  `${PKG}.RateLimitQuotaUsageReports`,
  `${PKG}.RateLimitQuotaUsageReports.BucketQuotaUsage`,
  `${PKG}.RateLimitQuotaResponse`,
  `${PKG}.RateLimitQuotaResponse.BucketAction`,
  `${PKG}.RateLimitQuotaResponse.BucketAction.QuotaAssignmentAction`,
  `${PKG}.BucketId`,
  'envoy.type.v3.RateLimitStrategy',
  'envoy.type.v3.RateLimitStrategy.RequestsPerTimeUnit',
  'envoy.type.v3.TokenBucket',
])('%s has the upstream fields and numbers', (name) => {
  const mine = ours.lookupType(name);
  const theirs = upstream.lookupType(name);
  const shape = (t: protobuf.Type): unknown[] =>
    t.fieldsArray.map((f) => [f.name, f.id, f.type, f.repeated, f.map, f.partOf?.name]);
  expect(shape(mine)).toEqual(shape(theirs));
});

test('the service and the enums are the upstream ones', () => {
  const method = (root: protobuf.Root): unknown => {
    const m = root.lookupService(`${PKG}.RateLimitQuotaService`).methods.StreamRateLimitQuotas;
    return [m?.requestType, m?.responseType, m?.requestStream, m?.responseStream];
  };
  expect(method(ours)).toEqual(method(upstream));
  expect(method(ours)).toEqual([
    'RateLimitQuotaUsageReports',
    'RateLimitQuotaResponse',
    true,
    true,
  ]);
  for (const name of ['envoy.type.v3.RateLimitStrategy.BlanketRule', 'envoy.type.v3.RateLimitUnit'])
    expect(ours.lookupEnum(name).values).toEqual(upstream.lookupEnum(name).values);
});

test('a report Envoy encodes decodes as the service reads it', () => {
  const type = upstream.lookupType(`${PKG}.RateLimitQuotaUsageReports`);
  const bytes = type
    .encode(
      type.fromObject({
        domain: 'edge',
        bucket_quota_usages: [
          {
            bucket_id: { bucket: { name: 'api', tenant: 'acme' } },
            time_elapsed: { seconds: 2, nanos: 500_000_000 },
            num_requests_allowed: 9_000_000_000,
            num_requests_denied: 3,
          },
        ],
      }),
    )
    .finish();
  expect(decodeReports(bytes)).toEqual({
    domain: 'edge',
    bucketQuotaUsages: [
      {
        bucketId: { bucket: { name: 'api', tenant: 'acme' } },
        timeElapsed: { seconds: 2, nanos: 500_000_000 },
        numRequestsAllowed: 9_000_000_000,
        numRequestsDenied: 3,
      },
    ],
  });
  expect(() => decodeReports(Buffer.from([0x0a, 0xff]))).toThrow(UndecodableReport);
});

test("every action the service sends decodes with Envoy's protos, ALLOW_ALL (0) included", () => {
  const bucket = new Map([['name', 'api']]);
  const actions: BucketAction[] = [
    { kind: 'assign', bucket, ttlMs: 10_000, strategy: { kind: 'blanket', rule: 'ALLOW_ALL' } },
    { kind: 'assign', bucket, ttlMs: 1500, strategy: { kind: 'blanket', rule: 'DENY_ALL' } },
    {
      kind: 'assign',
      bucket,
      ttlMs: 30_000,
      strategy: {
        kind: 'token_bucket',
        maxTokens: 7,
        tokensPerFill: 50,
        fillSeconds: 999_999_999,
        fillNanos: 999_999_999,
      },
    },
    { kind: 'abandon', bucket },
  ];
  const type = upstream.lookupType(`${PKG}.RateLimitQuotaResponse`);
  const decoded = type.toObject(type.decode(encodeResponse(actions)), {
    longs: Number,
    enums: String,
    oneofs: true,
  }) as { bucket_action: Record<string, unknown>[] };
  expect(decoded.bucket_action).toEqual([
    {
      bucket_id: { bucket: { name: 'api' } },
      bucket_action: 'quota_assignment_action',
      quota_assignment_action: {
        assignment_time_to_live: { seconds: 10, nanos: 0 },
        rate_limit_strategy: { strategy: 'blanket_rule', blanket_rule: 'ALLOW_ALL' },
      },
    },
    {
      bucket_id: { bucket: { name: 'api' } },
      bucket_action: 'quota_assignment_action',
      quota_assignment_action: {
        assignment_time_to_live: { seconds: 1, nanos: 500_000_000 },
        rate_limit_strategy: { strategy: 'blanket_rule', blanket_rule: 'DENY_ALL' },
      },
    },
    {
      bucket_id: { bucket: { name: 'api' } },
      bucket_action: 'quota_assignment_action',
      quota_assignment_action: {
        assignment_time_to_live: { seconds: 30, nanos: 0 },
        rate_limit_strategy: {
          strategy: 'token_bucket',
          token_bucket: {
            max_tokens: 7,
            tokens_per_fill: { value: 50 },
            fill_interval: { seconds: 999_999_999, nanos: 999_999_999 },
          },
        },
      },
    },
    { bucket_id: { bucket: { name: 'api' } }, bucket_action: 'abandon_action', abandon_action: {} },
  ]);
});
