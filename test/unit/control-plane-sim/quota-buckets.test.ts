// The simulator's quota_buckets: sent field for field as a QuotaRules resource of the file's
// name (never in RateLimitConfig), read by the service into the rules the file gives, and
// refused where the protocol cannot carry what the file says.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigFileError, resourceFromYaml } from '../../../control-plane-sim/src/config-files';
import { ConfigError, parseConfigFile, type ConfigDocument } from '../../../src/config';
import { messageType, QUOTA_RULES, RATE_LIMIT_CONFIG } from '../../../src/lib/proto';
import { decodeResources } from '../../../src/provider/xds/quota-rules-resource';

const EDGE_QUOTA = path.resolve(
  __dirname,
  '../../../examples/envoy/ratelimit/config/edge-quota.yaml',
);

function sent(yamlText: string): unknown {
  const resource = resourceFromYaml('r', yamlText);
  const config = messageType(RATE_LIMIT_CONFIG.file, RATE_LIMIT_CONFIG.name);
  const inConfig = config.toObject(config.decode(resource.value)).quotaBuckets as unknown;
  expect(inConfig).toBeUndefined();
  if (resource.quota === undefined) return undefined;
  const type = messageType(QUOTA_RULES.file, QUOTA_RULES.name);
  const message = type.toObject(type.decode(resource.quota), { enums: String, longs: Number });
  expect(message).toMatchObject({ name: 'r' });
  return message.quotaBuckets;
}

function served(yamlText: string): ConfigDocument | ConfigError {
  const { typeUrl, value, quota } = resourceFromYaml('edge', yamlText);
  const both = [{ type_url: typeUrl, value }];
  if (quota !== undefined) both.push({ type_url: QUOTA_RULES.typeUrl, value: quota });
  // A refusal of the rules, else the RateLimitConfig document they joined.
  const decoded = decodeResources(both);
  const found = decoded.find((d) => d instanceof ConfigError) ?? decoded[0];
  if (found === undefined) throw new Error('nothing decoded');
  return found;
}

function refusal(yamlText: string): string {
  try {
    resourceFromYaml('edge', yamlText, 'rules/edge.yaml');
  } catch (err: unknown) {
    expect(err).toBeInstanceOf(ConfigFileError);
    return (err as Error).message;
  }
  throw new Error('the file was accepted');
}

const item = (...lines: string[]): string =>
  ['domain: edge', 'quota_buckets:', ...lines, ''].join('\n');

it('serves the example quota rules, which the service reads as it reads the file', () => {
  const text = readFileSync(EDGE_QUOTA, 'utf8');
  const file = parseConfigFile('edge-quota.yaml', text);
  const resource = served(text);
  if (file instanceof ConfigError) throw file;
  if (resource instanceof ConfigError) throw resource;
  const bare = (doc: ConfigDocument) => doc.quotaBuckets?.map((r) => ({ ...r, source: '' }));
  expect(bare(resource)?.length).toBe(3);
  expect(bare(resource)).toEqual(bare(file));
});

it('sends every key of an item, and leaves an absent key unset', () => {
  expect(
    sent(
      item(
        '  - bucket: { name: api, tenant: 7 }',
        '    requests_per_unit: 0',
        '    unit: Minute',
        '    strategy: token_bucket',
        '    max_tokens: 12',
        '    assignment_ttl: 1m0.5s',
        '  - bucket: { name: blocked }',
        '    blanket_rule: deny_all',
      ),
    ),
  ).toEqual([
    {
      bucket: { name: 'api', tenant: '7' },
      requestsPerUnit: { value: 0 },
      unit: 'MINUTE',
      strategy: 'TOKEN_BUCKET',
      maxTokens: { value: 12 },
      assignmentTtl: { seconds: 60, nanos: 500_000_000 },
    },
    { bucket: { name: 'blocked' }, blanketRule: 'DENY_ALL' },
  ]);
});

it('sends a file without quota_buckets without any', () => {
  expect(sent('domain: d\ndescriptors: []\n')).toBeUndefined();
});

it('leaves what the protocol carries to the service, which refuses it naming the item', () => {
  const refused = served(
    item('  - bucket: { name: api }', '    blanket_rule: deny_all', '    requests_per_unit: 5'),
  );
  expect((refused as ConfigError).message).toBe(
    "resource edge: config error, 'requests_per_unit' has no meaning beside 'blanket_rule' (at quota_buckets[0].requests_per_unit)",
  );
  const week = served(item('  - { bucket: { name: api }, requests_per_unit: 5, unit: week }'));
  expect((week as ConfigError).message).toMatch(/has no week.*\(at quota_buckets\[0\]\.unit\)$/);
});

it.each([
  [
    'an unknown key',
    item("  - bucket: { name: api, tenant: '*' }", '    blanket_rule: deny_all', '    ttl: 5s'),
    "rules/edge.yaml:5:10: quota bucket {name=api,tenant=*} (at quota_buckets[0].ttl): unknown key 'ttl'; accepted: bucket, requests_per_unit, unit, strategy, max_tokens, assignment_ttl, blanket_rule",
  ],
  [
    'a unit the protocol has no word for',
    item('  - { bucket: { name: api }, requests_per_unit: 5, unit: fortnight }'),
    'rules/edge.yaml:3:58: quota bucket {name=api} (at quota_buckets[0].unit): unknown unit "fortnight"; accepted: second, minute, hour, day, month, year, week',
  ],
  [
    'an unknown strategy',
    item('  - { bucket: { name: api }, requests_per_unit: 5, unit: second, strategy: leaky }'),
    'rules/edge.yaml:3:76: quota bucket {name=api} (at quota_buckets[0].strategy): unknown strategy "leaky"; accepted: requests_per_time_unit, token_bucket',
  ],
  [
    'an unknown blanket rule',
    item('  - { bucket: { name: api }, blanket_rule: maybe }'),
    'rules/edge.yaml:3:44: quota bucket {name=api} (at quota_buckets[0].blanket_rule): unknown blanket_rule "maybe"; accepted: allow_all, deny_all',
  ],
  [
    'a budget that is not a whole number',
    item('  - { bucket: { name: api }, requests_per_unit: 1.5, unit: second }'),
    'rules/edge.yaml:3:49: quota bucket {name=api} (at quota_buckets[0].requests_per_unit): requests_per_unit must be a whole number from 0 to 4294967295',
  ],
  [
    'a duration that does not parse',
    item('  - { bucket: { name: api }, blanket_rule: deny_all, assignment_ttl: 30 }'),
    'rules/edge.yaml:3:70: quota bucket {name=api} (at quota_buckets[0].assignment_ttl): assignment_ttl must be a duration such as 30s or 2m, got 30',
  ],
  [
    'a bucket value that is not text',
    item('  - { bucket: { name: [a] }, blanket_rule: deny_all }'),
    "rules/edge.yaml:3:15: quota bucket {name=} (at quota_buckets[0].bucket): bucket key 'name' needs a value",
  ],
  [
    'an item that is not a map',
    item('  - api'),
    'rules/edge.yaml:3:5: quota_buckets[0] must be a map',
  ],
  [
    'a list that is not one',
    'domain: edge\nquota_buckets: { bucket: x }\n',
    'rules/edge.yaml:2:16: quota_buckets must be a list',
  ],
])('refuses %s, naming the file, line, column and item', (_what, text, message) => {
  expect(refusal(text)).toBe(message);
});
