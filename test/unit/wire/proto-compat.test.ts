// Our api/ protos against the upstream definitions @grpc/grpc-js-xds ships: same fields and
// numbers, and messages that cross between the two encodings intact, both ways.
import { existsSync } from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';
import { API_DIR, API_FILES, loadApi } from '../../../src/lib/proto';

const DEPS = path.resolve(
  __dirname,
  '..',
  '..',
  '..',
  'node_modules',
  '@grpc',
  'grpc-js-xds',
  'deps',
);
const UPSTREAM_DIRS = [
  ...['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => path.join(DEPS, d)),
  // google/protobuf/descriptor.proto, which the upstream annotations import.
  path.resolve(__dirname, '..', '..', '..', 'node_modules', 'protobufjs'),
];

/**
 * Fields of ours that the upstream copy bundled with @grpc/grpc-js-xds predates (docs/wire-format.md
 * gives their numbers; newer Envoy releases send them). Listed so that any other missing
 * field fails the test.
 */
const NEWER_THAN_BUNDLED_UPSTREAM = new Set([
  'envoy.extensions.common.ratelimit.v3.RateLimitDescriptor.hits_addend',
  'envoy.extensions.common.ratelimit.v3.RateLimitDescriptor.is_negative_hits',
  'envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit.WEEK',
]);

function load(files: readonly string[], dirs: readonly string[]): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    for (const dir of dirs) {
      const candidate = path.join(dir, target);
      if (existsSync(candidate)) return candidate;
    }
    return target; // google/protobuf/*.proto come bundled with protobufjs.
  };
  root.loadSync([...files], { keepCase: true });
  root.resolveAll();
  return root;
}

const ours = load(API_FILES, [API_DIR]);
const upstream = load(
  [
    'envoy/service/ratelimit/v3/rls.proto',
    'envoy/service/discovery/v3/ads.proto',
    'envoy/config/core/v3/base.proto',
    'google/rpc/status.proto',
  ],
  UPSTREAM_DIRS,
);

const SHARED_MESSAGES = [
  'envoy.service.ratelimit.v3.RateLimitRequest',
  'envoy.service.ratelimit.v3.RateLimitResponse',
  'envoy.service.ratelimit.v3.RateLimitResponse.RateLimit',
  'envoy.service.ratelimit.v3.RateLimitResponse.Quota',
  'envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus',
  'envoy.extensions.common.ratelimit.v3.RateLimitDescriptor',
  'envoy.extensions.common.ratelimit.v3.RateLimitDescriptor.Entry',
  'envoy.extensions.common.ratelimit.v3.RateLimitDescriptor.RateLimitOverride',
  'envoy.config.core.v3.HeaderValue',
  'envoy.config.core.v3.Node',
  'envoy.config.core.v3.Locality',
  'envoy.config.core.v3.ControlPlane',
  'envoy.config.core.v3.BuildVersion',
  'envoy.type.v3.SemanticVersion',
  'envoy.service.discovery.v3.DiscoveryRequest',
  'envoy.service.discovery.v3.DiscoveryResponse',
  'google.rpc.Status',
];

const SHARED_ENUMS = [
  'envoy.service.ratelimit.v3.RateLimitResponse.Code',
  'envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit',
  'envoy.type.v3.RateLimitUnit',
];

function typeName(field: protobuf.Field): string {
  return field.resolvedType === null ? field.type : field.resolvedType.fullName.replace(/^\./, '');
}

describe('every field of ours is the upstream field', () => {
  it.each(SHARED_MESSAGES)('%s', (name) => {
    const mine = ours.lookupType(name);
    const theirs = upstream.lookupType(name);
    expect(Object.keys(mine.fields).length).toBeGreaterThan(0);
    for (const field of mine.fieldsArray) {
      const other = theirs.fields[field.name];
      if (other === undefined && NEWER_THAN_BUNDLED_UPSTREAM.has(`${name}.${field.name}`)) continue;
      expect({
        field: field.name,
        id: other?.id,
        type: other === undefined ? undefined : typeName(other),
        repeated: other?.repeated,
      }).toEqual({
        field: field.name,
        id: field.id,
        type: typeName(field),
        repeated: field.repeated,
      });
    }
  });

  it.each(SHARED_ENUMS)('%s', (name) => {
    const mine = ours.lookupEnum(name).values;
    const theirs = upstream.lookupEnum(name).values;
    expect(Object.keys(mine).length).toBeGreaterThan(1);
    for (const [value, number] of Object.entries(mine)) {
      if (theirs[value] === undefined && NEWER_THAN_BUNDLED_UPSTREAM.has(`${name}.${value}`))
        continue;
      expect({ value, number: theirs[value] }).toEqual({ value, number });
    }
  });
});

/** Encodes with one root, decodes with the other, and returns the decoded plain object. */
function cross(
  from: protobuf.Root,
  to: protobuf.Root,
  name: string,
  value: Record<string, unknown>,
): Record<string, unknown> {
  const encoder = from.lookupType(name);
  const decoder = to.lookupType(name);
  const bytes = encoder.encode(encoder.fromObject(value)).finish();
  return decoder.toObject(decoder.decode(bytes), {
    longs: Number,
    enums: String,
    defaults: false,
    oneofs: false,
  });
}

const struct = {
  fields: {
    team: { stringValue: 'payments' },
    limit: { numberValue: 10 },
    nested: { structValue: { fields: { on: { boolValue: true } } } },
    list: { listValue: { values: [{ stringValue: 'a' }, { nullValue: 'NULL_VALUE' }] } },
  },
};

const SAMPLES: [string, Record<string, unknown>][] = [
  [
    'envoy.service.ratelimit.v3.RateLimitRequest',
    {
      domain: 'edge',
      hits_addend: 3,
      descriptors: [
        {
          entries: [
            { key: 'remote_address', value: '10.0.0.1' },
            { key: 'path', value: '/api' },
          ],
          limit: { requests_per_unit: 7, unit: 'MINUTE' },
        },
        { entries: [{ key: 'user', value: 'u' }] },
      ],
    },
  ],
  [
    'envoy.service.ratelimit.v3.RateLimitResponse',
    {
      overall_code: 'OVER_LIMIT',
      statuses: [
        {
          code: 'OVER_LIMIT',
          current_limit: { requests_per_unit: 10, unit: 'HOUR', name: 'hourly' },
          limit_remaining: 0,
          duration_until_reset: { seconds: 3600, nanos: 0 },
          quota: { requests: 5, valid_until: { seconds: 1700000000, nanos: 0 }, id: 'q' },
        },
        { code: 'OK', limit_remaining: 4294967295 },
      ],
      response_headers_to_add: [{ key: 'RateLimit-Limit', value: '10' }],
      request_headers_to_add: [{ key: 'X-Remaining', value: '0', raw_value: Buffer.from('0') }],
      raw_body: Buffer.from('too many'),
      dynamic_metadata: struct,
      quota: { requests: 1, id: 'whole' },
    },
  ],
  [
    'envoy.service.discovery.v3.DiscoveryRequest',
    {
      version_info: '7',
      node: {
        id: 'ratelimit-1',
        cluster: 'rls',
        metadata: struct,
        locality: { region: 'eu', zone: 'eu-1a', sub_zone: 'rack-3' },
        user_agent_name: 'ratelimit-ts',
        user_agent_version: '0.1.0',
        client_features: ['envoy.lb.does_not_support_overprovisioning'],
      },
      resource_names: [],
      type_url: 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig',
      response_nonce: 'n-3',
      error_detail: {
        code: 3,
        message: 'bad resource',
        details: [{ type_url: 'type.googleapis.com/x', value: Buffer.from([1, 2]) }],
      },
    },
  ],
  [
    'envoy.service.discovery.v3.DiscoveryResponse',
    {
      version_info: '8',
      resources: [
        {
          type_url: 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig',
          value: Buffer.from([10, 1, 97]),
        },
      ],
      canary: true,
      type_url: 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig',
      nonce: 'n-4',
      control_plane: { identifier: 'sim' },
    },
  ],
  [
    'envoy.config.core.v3.Node',
    {
      id: 'n',
      user_agent_build_version: { version: { major_number: 1, minor_number: 2, patch: 3 } },
    },
  ],
];

describe('messages cross between the encodings intact', () => {
  it.each(SAMPLES)('%s: ours to upstream and back', (name, value) => {
    const decoded = cross(ours, upstream, name, value);
    expect(cross(upstream, ours, name, decoded)).toEqual(cross(ours, ours, name, value));
    expect(decoded).toEqual(cross(ours, ours, name, value));
  });

  it('keeps a zero per-descriptor hits_addend distinct from an unset one, and carries is_negative_hits', () => {
    const decoded = cross(ours, ours, 'envoy.service.ratelimit.v3.RateLimitRequest', {
      domain: 'd',
      descriptors: [
        { entries: [], hits_addend: { value: 0 }, is_negative_hits: true },
        { entries: [], hits_addend: { value: 9 } },
        { entries: [] },
      ],
    });
    expect(decoded.descriptors).toEqual([
      { hits_addend: { value: 0 }, is_negative_hits: true },
      { hits_addend: { value: 9 } },
      {},
    ]);
  });

  it('lists exactly the fields the bundled upstream copy lacks', () => {
    const missing: string[] = [];
    for (const name of SHARED_MESSAGES) {
      const theirs = upstream.lookupType(name);
      for (const field of ours.lookupType(name).fieldsArray)
        if (theirs.fields[field.name] === undefined) missing.push(`${name}.${field.name}`);
    }
    for (const name of SHARED_ENUMS) {
      const theirs = upstream.lookupEnum(name).values;
      for (const value of Object.keys(ours.lookupEnum(name).values))
        if (theirs[value] === undefined) missing.push(`${name}.${value}`);
    }
    expect(new Set(missing)).toEqual(NEWER_THAN_BUNDLED_UPSTREAM);
  });
});

describe('the service definitions', () => {
  it('expose the method paths Envoy and management servers call', () => {
    const root = loadApi(API_FILES) as unknown as Record<string, unknown>;
    const service = (dotted: string): Record<string, { path: string }> => {
      let node: unknown = root;
      for (const part of dotted.split('.')) node = (node as Record<string, unknown>)[part];
      return (node as { service: Record<string, { path: string }> }).service;
    };
    expect(service('envoy.service.ratelimit.v3.RateLimitService').ShouldRateLimit?.path).toBe(
      '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
    );
    expect(
      service('envoy.service.discovery.v3.AggregatedDiscoveryService').StreamAggregatedResources
        ?.path,
    ).toBe('/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources');
    expect(
      service('ratelimit.service.ratelimit.v3.RateLimitConfigDiscoveryService').StreamRlsConfigs
        ?.path,
    ).toBe('/ratelimit.service.ratelimit.v3.RateLimitConfigDiscoveryService/StreamRlsConfigs');
    expect(service('grpc.health.v1.Health').Check?.path).toBe('/grpc.health.v1.Health/Check');
  });

  it('carry the project extension fields of RateLimitConfig at high numbers only', () => {
    const descriptor = ours.lookupType('ratelimit.config.ratelimit.v3.RateLimitDescriptor');
    expect(descriptor.fieldsArray.map((f) => [f.name, f.id])).toEqual([
      ['key', 1],
      ['value', 2],
      ['rate_limit', 3],
      ['descriptors', 4],
      ['shadow_mode', 5],
      ['detailed_metric', 6],
      ['quota_mode', 7],
      ['metadata', 8],
      ['value_to_metric', 1000],
      ['share_threshold', 1001],
      ['rate_limits', 1002],
    ]);
    const policy = ours.lookupType('ratelimit.config.ratelimit.v3.RateLimitPolicy');
    expect(policy.fieldsArray.filter((f) => f.id >= 1000).map((f) => [f.name, f.id])).toEqual([
      ['algorithm', 1000],
      ['burst', 1001],
    ]);
  });
});
