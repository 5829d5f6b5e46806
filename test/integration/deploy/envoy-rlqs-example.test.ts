// examples/envoy/envoy-rlqs.yaml against Envoy's own API (the rate_limit_quota filter and its
// matcher, unknown fields refused), and its bucket ids against the service's quota rules.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ConfigError, compile, parseConfigFile } from '../../../src/config';
import { StatsStore } from '../../../src/stats';
import { loadEnvoyProtos, ProtoJsonChecker } from '../../helpers/deploy/proto-json';
import { ROOT } from '../../helpers/deploy/chart';

const EXAMPLE = path.join(ROOT, 'examples', 'envoy');
const QUOTA_FILTER =
  'type.googleapis.com/envoy.extensions.filters.http.rate_limit_quota.v3.RateLimitQuotaFilterConfig';
const HCM =
  'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const HTTP_OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';
const SETTINGS = 'envoy.extensions.filters.http.rate_limit_quota.v3.RateLimitQuotaBucketSettings';

// Envoy's YAML is read by deep paths, after ProtoJsonChecker has checked it against the protos.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

const text = readFileSync(path.join(EXAMPLE, 'envoy-rlqs.yaml'), 'utf8');
const envoy = parse(text) as Obj;
const compose = parse(readFileSync(path.join(EXAMPLE, 'compose.yaml'), 'utf8')) as Obj;

function quotaFilter(): Obj {
  const filters = (envoy.static_resources.listeners as Obj[])
    .flatMap((l) => l.filter_chains as Obj[])
    .flatMap((c) => c.filters as Obj[])
    .filter((f) => f.typed_config['@type'] === HCM)
    .flatMap((f) => f.typed_config.http_filters as Obj[])
    .filter((f) => f.typed_config['@type'] === QUOTA_FILTER);
  expect(filters).toHaveLength(1);
  return filters[0]!.typed_config;
}

test('envoy-rlqs.yaml is a valid Envoy Bootstrap (upstream protos, unknown fields refused)', () => {
  const root = loadEnvoyProtos([
    'envoy/config/bootstrap/v3/bootstrap.proto',
    'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
    'envoy/extensions/filters/http/router/v3/router.proto',
    'envoy/extensions/filters/http/rate_limit_quota/v3/rate_limit_quota.proto',
    'envoy/extensions/upstreams/http/v3/http_protocol_options.proto',
    'envoy/type/matcher/v3/http_inputs.proto',
  ]);
  const bootstrap = root.lookupType('envoy.config.bootstrap.v3.Bootstrap');
  const checker = new ProtoJsonChecker(root);
  checker.message(bootstrap, envoy, 'envoy-rlqs.yaml');
  expect(checker.problems).toEqual([]);

  // The checker reaches inside the filter and its matcher.
  const broken = structuredClone(envoy);
  const filter = broken.static_resources.listeners[0].filter_chains[0].filters[0].typed_config
    .http_filters[0].typed_config as Obj;
  filter.domian = 'x';
  filter.bucket_matchers.matcher_list.matchers[0].on_match.action.typed_config.reporting_interval =
    'soon';
  const strict = new ProtoJsonChecker(root);
  strict.message(bootstrap, broken, 'envoy-rlqs.yaml');
  expect(strict.problems.join('\n')).toMatch(/domian: unknown field/);
  expect(strict.problems.join('\n')).toMatch(/reporting_interval: expected a duration/);
});

test("the filter streams to the service's gRPC port over HTTP/2", () => {
  const filter = quotaFilter();
  const name = filter.rlqs_server.envoy_grpc.cluster_name as string;
  const cluster = (envoy.static_resources.clusters as Obj[]).find((c) => c.name === name)!;
  expect(
    cluster.typed_extension_protocol_options[HTTP_OPTIONS].explicit_http_config,
  ).toHaveProperty('http2_protocol_options');
  const socket =
    cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address;
  const ratelimit = compose.services[socket.address] as Obj;
  expect(socket.port_value).toBe(Number(ratelimit.environment.GRPC_PORT ?? 8081));
});

test('every bucket id the filter builds is governed by a rule of the example rule file', () => {
  const source = path.join(EXAMPLE, 'ratelimit', 'config', 'edge-quota.yaml');
  const doc = parseConfigFile(source, readFileSync(source, 'utf8'));
  if (doc instanceof ConfigError) throw doc;
  const compiled = compile([doc], {
    stats: new StatsStore(),
    mergeDomainConfig: false,
    sanitizeDots: false,
  });
  if (!compiled.ok) throw new Error(compiled.errors.join('\n'));
  const rules = compiled.snapshot.quotaRules;
  const filter = quotaFilter();
  expect(doc.domain).toBe(filter.domain);

  // The builders' keys, with a header value standing for custom_value.
  const settings = [
    ...(filter.bucket_matchers.matcher_list.matchers as Obj[]).map((m) => m.on_match.action),
    filter.bucket_matchers.on_no_match.action,
  ].map((action: Obj) => action.typed_config.bucket_id_builder.bucket_id_builder as Obj);
  const governing = settings.map((builder) => {
    const bucket = new Map<string, string>(
      Object.entries(builder).map(([key, value]: [string, Obj]) => [
        key,
        (value.string_value as string | undefined) ?? 'acme',
      ]),
    );
    return rules.match(filter.domain as string, bucket)?.id;
  });
  expect(governing).toEqual(['name=api,tenant=*', 'name=api,tenant=anonymous']);
  expect(
    rules.match(
      'edge-quota',
      new Map([
        ['name', 'api'],
        ['tenant', 'blocked'],
      ]),
    )?.policy,
  ).toEqual({
    kind: 'blanket',
    rule: 'deny_all',
  });
});

/** Every value under `key` anywhere in `value`, with its path. */
function every(value: unknown, key: string, at = ''): { at: string; value: Obj }[] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value as Obj).flatMap(([k, v]) => [
    ...(k === key ? [{ at: `${at}.${k}`, value: v as Obj }] : []),
    ...every(v, key, `${at}.${k}`),
  ]);
}

// What Envoy's filter really does with these settings (docs/rlqs.md#what-envoy-applies, read
// from filter.cc, global_client_impl.cc and filter_persistence.cc).
test('the filter config relies on nothing Envoy does not implement', () => {
  const filter = quotaFilter();
  const settings = every(filter, 'typed_config').filter(
    (s) => s.value['@type'] === `type.googleapis.com/${SETTINGS}`,
  );
  expect(settings).toHaveLength(2);
  // Not read by Envoy: reuse_last_assignment; skipped by Envoy: requests_per_time_unit.
  expect(every(filter, 'reuse_last_assignment')).toEqual([]);
  expect(every(filter, 'requests_per_time_unit')).toEqual([]);
  for (const { value } of settings) {
    // Required by the proto, ignored by Envoy (5 s, whatever it says): 5s, and said so.
    expect(value.reporting_interval).toBe('5s');
    // A token bucket as no_assignment_behavior dereferences a null limiter in Envoy.
    expect(Object.keys(value.no_assignment_behavior.fallback_rate_limit)).toEqual(['blanket_rule']);
    const expired = value.expired_assignment_behavior as Obj | undefined;
    // Without a timeout the fallback lasts 0 s (its seconds are the fallback's TTL).
    if (expired !== undefined)
      expect(expired.expired_assignment_behavior_timeout).toMatch(/^\d+s$/);
  }
  expect(text).toMatch(/ignored by Envoy: it reports every\s+#\s+5 s/);
  // Token buckets in whole seconds: Envoy's rate is tokens_per_fill / ToInt64Seconds(fill_interval).
  for (const { value } of every(filter, 'token_bucket')) {
    expect(value.fill_interval).toMatch(/^[1-9]\d*s$/);
    expect(Number.isInteger(value.tokens_per_fill)).toBe(true);
  }
  // The rule file's budgets are token buckets, the strategy Envoy applies.
  const source = path.join(EXAMPLE, 'ratelimit', 'config', 'edge-quota.yaml');
  const doc = parseConfigFile(source, readFileSync(source, 'utf8'));
  if (doc instanceof ConfigError) throw doc;
  const budgets = (doc.quotaBuckets ?? []).filter((r) => r.policy.kind === 'budget');
  expect(budgets.map((r) => r.policy)).toEqual([
    expect.objectContaining({ strategy: 'token_bucket' }),
    expect.objectContaining({ strategy: 'token_bucket' }),
  ]);
});
