// The xDS client against a management server built from the upstream definitions that
// @grpc/grpc-js-xds ships (as go-control-plane encodes them), resources encoded by field number.
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import type { ConfigError, ConfigSnapshot } from '../../../src/config';
import { silentLogger } from '../../../src/lib/logger';
import { XdsConfigProvider } from '../../../src/provider';
import { loadSettings, type XdsSourceSettings } from '../../../src/settings';
import { StatsStore } from '../../../src/stats';
import { AdsServer, deepRateLimitConfig, type AdsRequest } from '../../helpers/ads-server';
import { eventually } from '../../helpers/eventually';

const TYPE_URL = 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig';

/** A RateLimitConfig written field by field, as go-control-plane's generated code encodes it. */
function rateLimitConfig(name: string, domain: string, unit: number): Uint8Array {
  const w = protobuf.Writer.create();
  w.uint32((1 << 3) | 2).string(name);
  w.uint32((2 << 3) | 2).string(domain);
  // descriptors (3): key (1), value (2), rate_limit (3), shadow_mode (5), metadata (8)
  const d = protobuf.Writer.create();
  d.uint32((1 << 3) | 2).string('path');
  d.uint32((2 << 3) | 2).string('/api');
  const policy = protobuf.Writer.create();
  policy.uint32((1 << 3) | 0).int32(unit);
  policy.uint32((2 << 3) | 0).uint32(40);
  policy.uint32((4 << 3) | 2).string('api');
  const policyBytes = policy.finish();
  d.uint32((3 << 3) | 2).bytes(policyBytes);
  d.uint32((5 << 3) | 0).bool(true);
  // metadata: Struct { fields (1): map entry { key (1), value (2): Value { string_value (3) } } }
  const value = protobuf.Writer.create()
    .uint32((3 << 3) | 2)
    .string('payments')
    .finish();
  const entry = protobuf.Writer.create()
    .uint32((1 << 3) | 2)
    .string('team')
    .uint32((2 << 3) | 2)
    .bytes(value)
    .finish();
  const struct = protobuf.Writer.create()
    .uint32((1 << 3) | 2)
    .bytes(entry)
    .finish();
  d.uint32((8 << 3) | 2).bytes(struct);
  w.uint32((3 << 3) | 2).bytes(d.finish());
  return w.finish();
}

let ads: AdsServer;
let port: number;
let streams: AdsServer['streams'];
let requests: AdsServer['requests'];

beforeAll(async () => {
  ads = await AdsServer.start();
  ({ port, streams, requests } = ads);
});

afterAll(async () => {
  await ads.close();
});

/** The RateLimitConfig requests of a stream (the QuotaRules subscription goes beside them). */
function ofConfig(stream: number): AdsRequest[] {
  return (requests[stream] ?? []).filter((r) => r.type_url === TYPE_URL);
}

it('understands upstream responses, ACKs, NACKs with the last good version, and resumes from it', async () => {
  const settings = loadSettings({
    CONFIG_TYPE: 'GRPC_XDS_SOTW',
    CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${port}`,
    CONFIG_GRPC_XDS_NODE_ID: 'wire-node',
    XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '20ms',
    XDS_CLIENT_BACKOFF_MAX_INTERVAL: '40ms',
    CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: '20ms',
  }).config.source as XdsSourceSettings;
  const snapshots: ConfigSnapshot[] = [];
  const rejections: (readonly ConfigError[])[] = [];
  const provider = new XdsConfigProvider({
    settings,
    compile: { stats: new StatsStore(), mergeDomainConfig: false, sanitizeDots: false },
    logger: silentLogger,
  });
  await provider.start({
    onSnapshot: (s) => snapshots.push(s),
    onRejected: (e) => rejections.push(e),
  });
  try {
    await eventually(() => ofConfig(0).length === 1, { what: 'the first request' });
    expect(ofConfig(0)[0]).toMatchObject({
      version_info: '',
      node: { id: 'wire-node', user_agent_name: 'ratelimit-ts' },
      type_url: TYPE_URL,
    });
    expect(ofConfig(0)[0]?.response_nonce ?? '').toBe('');
    expect(ofConfig(0)[0]?.resource_names ?? []).toEqual([]);

    const respond = (version: string, nonce: string, unit: number): void => {
      streams[0]?.write({
        version_info: version,
        type_url: TYPE_URL,
        nonce,
        resources: [
          { type_url: TYPE_URL, value: Buffer.from(rateLimitConfig('edge-config', 'edge', unit)) },
        ],
        control_plane: { identifier: 'upstream-test' },
      });
    };
    respond('v1', 'n1', 2);
    await eventually(() => snapshots.length === 1, { what: 'a snapshot' });
    const match = snapshots[0]?.findLimit('edge', {
      entries: [{ key: 'path', value: '/api' }],
      limit: undefined,
    });
    expect(match?.rule).toMatchObject({
      requestsPerUnit: 40,
      unit: 'MINUTE',
      name: 'api',
      isShadow: true,
      metadata: { team: 'payments' },
    });
    await eventually(() => ofConfig(0).length === 2, { what: 'the ACK' });
    expect(ofConfig(0)[1]).toMatchObject({
      version_info: 'v1',
      response_nonce: 'n1',
      type_url: TYPE_URL,
    });
    expect(ofConfig(0)[1]?.error_detail).toBeUndefined();

    respond('v2', 'n2', 0);
    await eventually(() => ofConfig(0).length === 3, { what: 'the NACK' });
    expect(ofConfig(0)[2]).toMatchObject({
      version_info: 'v1',
      response_nonce: 'n2',
      error_detail: {
        code: 3,
        message:
          "resource edge-config: invalid rate limit unit 'UNKNOWN'; accepted: second, minute, hour, day, week, month, year (at descriptors[0].rate_limit)",
      },
    });
    expect(rejections).toHaveLength(1);
    expect(snapshots).toHaveLength(1);

    streams[0]?.emit('error', { code: grpc.status.UNAVAILABLE, details: 'going away' });
    await eventually(() => ofConfig(1).length === 1, { what: 'a new stream' });
    expect(ofConfig(1)[0]).toMatchObject({
      version_info: 'v1',
      node: { id: 'wire-node' },
      type_url: TYPE_URL,
    });
  } finally {
    await provider.stop();
  }
});

it('NACKs an update whose handling throws, and goes on with the next one', async () => {
  const settings = loadSettings({
    CONFIG_TYPE: 'GRPC_XDS_SOTW',
    CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${port}`,
  }).config.source as XdsSourceSettings;
  const at = streams.length;
  let snapshots = 0;
  const provider = new XdsConfigProvider({
    settings,
    compile: { stats: new StatsStore(), mergeDomainConfig: false, sanitizeDots: false },
    logger: silentLogger,
  });
  await provider.start({
    onSnapshot: () => {
      snapshots += 1;
      if (snapshots === 1) throw new Error('a listener that breaks');
    },
    onRejected: () => undefined,
  });
  try {
    await eventually(() => ofConfig(at).length === 1, { what: 'the first request' });
    const respond = (version: string, nonce: string): void => {
      streams[at]?.write({
        version_info: version,
        type_url: TYPE_URL,
        nonce,
        resources: [{ type_url: TYPE_URL, value: Buffer.from(rateLimitConfig('c', 'edge', 2)) }],
      });
    };
    respond('v1', 'n1');
    await eventually(() => ofConfig(at).length === 2, { what: 'the NACK' });
    expect(ofConfig(at)[1]).toMatchObject({
      response_nonce: 'n1',
      error_detail: { code: 3, message: 'the update could not be applied: a listener that breaks' },
    });
    respond('v2', 'n2');
    await eventually(() => ofConfig(at).length === 3, { what: 'the ACK' });
    expect(ofConfig(at)[2]).toMatchObject({ version_info: 'v2', response_nonce: 'n2' });
    expect(ofConfig(at)[2]?.error_detail).toBeUndefined();
  } finally {
    await provider.stop();
  }
});

it('refuses a resource whose descriptors nest deeper than 64 levels, without a crash', async () => {
  const settings = loadSettings({
    CONFIG_TYPE: 'GRPC_XDS_SOTW',
    CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${port}`,
  }).config.source as XdsSourceSettings;
  const at = streams.length;
  const rejections: (readonly ConfigError[])[] = [];
  const provider = new XdsConfigProvider({
    settings,
    compile: { stats: new StatsStore(), mergeDomainConfig: false, sanitizeDots: false },
    logger: silentLogger,
  });
  await provider.start({ onSnapshot: () => undefined, onRejected: (e) => rejections.push(e) });
  try {
    await eventually(() => ofConfig(at).length === 1, { what: 'the first request' });
    const config = deepRateLimitConfig('deep', 2000);
    streams[at]?.write({
      version_info: 'v1',
      type_url: TYPE_URL,
      nonce: 'n1',
      resources: [{ type_url: TYPE_URL, value: Buffer.from(config) }],
    });
    await eventually(() => ofConfig(at).length === 2, { what: 'the NACK' });
    expect(ofConfig(at)[1]?.error_detail?.message).toMatch(
      /descriptors nest deeper than 64 levels|cannot decode a RateLimitConfig/,
    );
    expect(rejections).toHaveLength(1);
  } finally {
    await provider.stop();
  }
});
