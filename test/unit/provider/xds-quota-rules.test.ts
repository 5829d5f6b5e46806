// Quota rules as this project's own xDS type, ratelimit_ts.quota.v1.QuotaRules, subscribed to
// on the same ADS stream as RateLimitConfig; the old RateLimitConfig field still read, with a
// deprecation warning at each load that uses it.
//
// How a management server that does not know the type behaves, read from go-control-plane:
// pkg/server/sotw/v3/ads.go, processADS, opens a cache watch for any request with a non-empty
// type_url (an empty one is the only refusal, InvalidArgument); pkg/cache/v3/simple.go,
// CreateWatch, leaves the watch open while the request's version_info equals the snapshot's
// version for the type, and pkg/cache/v3/snapshot.go, GetVersion, gives "" for a type it does not
// know, which is what a first request carries. So the subscription is never answered, and never
// refused, and the RateLimitConfig watch beside it is answered as before: the first test's
// server does just that. Envoy Gateway serves its rate limit service through the same cache:
// internal/xds/cache/snapshotcache.go wraps cachev3.NewSnapshotCache, and its OnStreamRequest
// callback only logs a request's type_url; it refuses a stream whose first request has no node
// id, which is why the node goes with the first request, RateLimitConfig's.
import type { ConfigSnapshot } from '../../../src/config';
import { MemoryLogger } from '../../../src/lib/logger';
import { messageType, QUOTA_RULES, RATE_LIMIT_CONFIG } from '../../../src/lib/proto';
import { XdsConfigProvider } from '../../../src/provider';
import { loadSettings, type XdsSourceSettings } from '../../../src/settings';
import { StatsStore } from '../../../src/stats';
import { AdsServer, type AdsRequest } from '../../helpers/ads-server';
import { eventually } from '../../helpers/eventually';

const CONFIG_URL = RATE_LIMIT_CONFIG.typeUrl;
const QUOTA_URL = QUOTA_RULES.typeUrl;

function encode(kind: typeof RATE_LIMIT_CONFIG | typeof QUOTA_RULES, body: object): Buffer {
  const type = messageType(kind.file, kind.name);
  return Buffer.from(type.encode(type.fromObject(body)).finish());
}

const config = (quotaBuckets: object[] = [], requestsPerUnit = 5): Buffer =>
  encode(RATE_LIMIT_CONFIG, {
    name: 'edge-config',
    domain: 'edge',
    descriptors: [{ key: 'path', rateLimit: { unit: 'SECOND', requestsPerUnit } }],
    quotaBuckets,
  });

const quota = (unit: string, blanketRule?: string): Buffer =>
  encode(QUOTA_RULES, {
    name: 'edge-quota',
    domain: 'edge',
    quotaBuckets: [
      {
        bucket: { name: 'api' },
        requestsPerUnit: { value: 50 },
        unit,
        ...(blanketRule === undefined ? {} : { blanketRule }),
      },
    ],
  });

let ads: AdsServer;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  ads = await AdsServer.start();
});

afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

afterAll(async () => {
  await ads.close();
});

async function subscribe(): Promise<{
  snapshots: ConfigSnapshot[];
  logger: MemoryLogger;
  at: number;
  of: (typeUrl: string) => AdsRequest[];
  respond: (typeUrl: string, version: string, value: Buffer) => void;
}> {
  const at = ads.streams.length;
  const settings = loadSettings({
    CONFIG_TYPE: 'GRPC_XDS_SOTW',
    CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${ads.port}`,
    CONFIG_GRPC_XDS_NODE_ID: 'quota-node',
  }).config.source as XdsSourceSettings;
  const logger = new MemoryLogger();
  const provider = new XdsConfigProvider({
    settings,
    compile: { stats: new StatsStore(), mergeDomainConfig: false, sanitizeDots: false },
    logger,
  });
  const snapshots: ConfigSnapshot[] = [];
  await provider.start({ onSnapshot: (s) => snapshots.push(s), onRejected: () => undefined });
  stops.push(() => provider.stop());
  const of = (typeUrl: string): AdsRequest[] =>
    (ads.requests[at] ?? []).filter((r) => r.type_url === typeUrl);
  await eventually(() => of(CONFIG_URL).length === 1 && of(QUOTA_URL).length === 1, {
    what: 'both subscriptions',
  });
  const respond = (typeUrl: string, version: string, value: Buffer): void => {
    ads.streams[at]?.write({
      version_info: version,
      type_url: typeUrl,
      nonce: `${typeUrl}-${version}`,
      resources: [{ type_url: typeUrl, value }],
    });
  };
  return { snapshots, logger, at, of, respond };
}

const api = new Map([['name', 'api']]);

it('subscribes to QuotaRules beside RateLimitConfig; a server that never answers it holds nothing up', async () => {
  const { snapshots, of, respond } = await subscribe();
  expect(of(QUOTA_URL)[0]).toMatchObject({ version_info: '' });
  expect(of(QUOTA_URL)[0]?.resource_names ?? []).toEqual([]);
  expect(of(QUOTA_URL)[0]?.node).toBeUndefined();
  expect(of(CONFIG_URL)[0]?.node).toMatchObject({ id: 'quota-node' });
  // As go-control-plane's snapshot cache does with a type it does not know: no answer at all.
  respond(CONFIG_URL, 'v1', config());
  await eventually(() => snapshots.length === 1, { what: 'a snapshot' });
  await eventually(() => of(CONFIG_URL).length === 2, { what: 'the ACK' });
  expect(of(CONFIG_URL)[1]).toMatchObject({
    version_info: 'v1',
    response_nonce: `${CONFIG_URL}-v1`,
  });
  expect(snapshots[0]?.domains).toEqual(['edge']);
  expect(snapshots[0]?.quotaRules.isEmpty).toBe(true);
  expect(of(QUOTA_URL)).toHaveLength(1);
  // The same resources under a new version are acknowledged without a new snapshot.
  respond(CONFIG_URL, 'v2', config());
  await eventually(() => of(CONFIG_URL).length === 3, { what: 'the second ACK' });
  expect(of(CONFIG_URL)[2]).toMatchObject({ version_info: 'v2' });
  expect(snapshots).toHaveLength(1);
});

it('takes quota rules from QuotaRules, keeps them across RateLimitConfig updates, NACKs a bad one', async () => {
  const { snapshots, of, respond, logger } = await subscribe();
  respond(CONFIG_URL, 'v1', config());
  respond(QUOTA_URL, 'q1', quota('SECOND'));
  await eventually(() => snapshots.length === 2, { what: 'two snapshots' });
  expect(snapshots[1]?.quotaRules.match('edge', api)?.policy).toMatchObject({
    requestsPerUnit: 50,
    unit: 'SECOND',
  });
  await eventually(() => of(QUOTA_URL).length === 2, { what: 'the ACK of QuotaRules' });
  expect(of(QUOTA_URL)[1]).toMatchObject({ version_info: 'q1', response_nonce: `${QUOTA_URL}-q1` });
  // A RateLimitConfig update compiles with the QuotaRules last accepted.
  respond(CONFIG_URL, 'v2', config([], 6));
  await eventually(() => snapshots.length === 3, { what: 'a third snapshot' });
  expect(snapshots[2]?.quotaRules.match('edge', api)).toBeDefined();
  // A refused QuotaRules is NACKed with its own last good version; the snapshot stands.
  respond(QUOTA_URL, 'q2', quota('SECOND', 'DENY_ALL'));
  await eventually(() => of(QUOTA_URL).length === 3, { what: 'the NACK' });
  expect(of(QUOTA_URL)[2]).toMatchObject({
    version_info: 'q1',
    error_detail: { message: expect.stringContaining('resource edge-quota') as unknown },
  });
  expect(of(CONFIG_URL).at(-1)?.error_detail).toBeUndefined();
  expect(snapshots).toHaveLength(3);
  expect(logger.lines.filter((l) => l.message.includes('deprecated'))).toEqual([]);
});

it('still reads quota_buckets of a RateLimitConfig, warning at each load that uses it', async () => {
  const { snapshots, respond, logger } = await subscribe();
  const old = config([{ bucket: { name: 'api' }, blanketRule: 'DENY_ALL' }]);
  respond(CONFIG_URL, 'v1', old);
  await eventually(() => snapshots.length === 1, { what: 'a snapshot' });
  expect(snapshots[0]?.quotaRules.match('edge', api)?.policy).toEqual({
    kind: 'blanket',
    rule: 'deny_all',
  });
  respond(CONFIG_URL, 'v2', config([{ bucket: { name: 'api' }, blanketRule: 'DENY_ALL' }], 6));
  await eventually(() => snapshots.length === 2, { what: 'a second snapshot' });
  const warnings = logger.lines.filter((l) => l.level === 'warning');
  expect(warnings.map((l) => l.message)).toEqual([
    expect.stringContaining('quota_buckets in a RateLimitConfig is deprecated'),
    expect.stringContaining('ratelimit_ts.quota.v1.QuotaRules'),
  ]);
});
