// The pieces of the xDS client: backoff delays, resource decoding, the node it presents.
import protobuf from 'protobufjs';
import { ConfigError, type ConfigDocument } from '../../../src/config';
import { messageType, RATE_LIMIT_CONFIG } from '../../../src/lib/proto';
import { fromStruct, toStruct } from '../../../src/lib/struct';
import {
  Backoff,
  decodeResource,
  RATE_LIMIT_CONFIG_TYPE_URL,
  ReconnectDelays,
  xdsNode,
} from '../../../src/provider';
import { loadSettings, type XdsSourceSettings } from '../../../src/settings';

describe('Backoff', () => {
  it('doubles from the initial interval up to the maximum, where it stays', () => {
    const b = new Backoff({
      initialIntervalMs: 100,
      maxIntervalMs: 1000,
      randomFactor: 0.5,
      jitter: false,
    });
    expect([b.next(), b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    b.reset();
    expect(b.next()).toBe(100);
  });

  it('spreads each delay over ±randomFactor with jitter', () => {
    const low = new Backoff(
      { initialIntervalMs: 100, maxIntervalMs: 1000, randomFactor: 0.5, jitter: true },
      () => 0,
    );
    const high = new Backoff(
      { initialIntervalMs: 100, maxIntervalMs: 1000, randomFactor: 0.5, jitter: true },
      () => 0.999999,
    );
    expect(low.next()).toBe(50);
    expect(high.next()).toBeCloseTo(150, 3);
    expect(low.next()).toBe(100);
  });

  it('keeps a maximum below the initial interval, and never waits less than 0', () => {
    const capped = new Backoff({
      initialIntervalMs: 3000,
      maxIntervalMs: 1000,
      randomFactor: 0,
      jitter: true,
    });
    expect([capped.next(), capped.next()]).toEqual([1000, 1000]);
    // A reference-style factor of 2 spreads over the whole range instead of going negative.
    const wide = (r: number): number =>
      new Backoff(
        { initialIntervalMs: 100, maxIntervalMs: 1000, randomFactor: 2, jitter: true },
        () => r,
      ).next();
    expect(wide(0)).toBe(0);
    expect(wide(0.5)).toBe(100);
  });
});

describe('ReconnectDelays', () => {
  it('retries at the connect interval until the server answers, then backs off, reset by messages', () => {
    const delays = new ReconnectDelays(
      { initialIntervalMs: 100, maxIntervalMs: 1000, randomFactor: 0.5, jitter: false },
      3000,
      () => 0.5,
    );
    expect([delays.next(), delays.next()]).toEqual([3000, 3000]);
    expect(delays.hasServerAnswered).toBe(false);
    delays.onMessage();
    expect(delays.hasServerAnswered).toBe(true);
    expect([delays.next(), delays.next(), delays.next()]).toEqual([100, 200, 400]);
    delays.onMessage();
    expect(delays.next()).toBe(100);
  });

  it('spreads the connect interval by half either way', () => {
    const at = (r: number): number =>
      new ReconnectDelays(
        { initialIntervalMs: 100, maxIntervalMs: 1000, randomFactor: 0.5, jitter: true },
        3000,
        () => r,
      ).next();
    expect(at(0)).toBe(1500);
    expect(at(0.999999)).toBeCloseTo(4500, 2);
  });
});

describe('decodeResource', () => {
  it('refuses another type and names the resource by position', () => {
    const result = decodeResource(
      { type_url: 'type.googleapis.com/envoy.config.cluster.v3.Cluster', value: Buffer.alloc(0) },
      2,
    );
    expect(result).toBeInstanceOf(ConfigError);
    expect((result as ConfigError).message).toBe(
      `resource #3: unexpected resource type "type.googleapis.com/envoy.config.cluster.v3.Cluster"; expected ${RATE_LIMIT_CONFIG_TYPE_URL}`,
    );
  });

  it('refuses bytes that are not a RateLimitConfig', () => {
    const result = decodeResource(
      { type_url: RATE_LIMIT_CONFIG_TYPE_URL, value: Buffer.from([0x0f]) },
      0,
    );
    expect((result as ConfigError).code).toBe('BAD_RESOURCE');
    expect((result as ConfigError).message).toMatch(
      /^resource #1: cannot decode a RateLimitConfig: /,
    );
  });

  it('reads the extension fields of this project', () => {
    const w = protobuf.Writer.create();
    w.uint32((2 << 3) | 2).string('d');
    const d = protobuf.Writer.create();
    d.uint32((1 << 3) | 2).string('k');
    d.uint32((1000 << 3) | 0).bool(true);
    d.uint32((1001 << 3) | 0).bool(true);
    w.uint32((3 << 3) | 2).bytes(d.finish());
    const doc = decodeResource({ type_url: RATE_LIMIT_CONFIG_TYPE_URL, value: w.finish() }, 0);
    expect(doc).toMatchObject({
      source: 'resource #1',
      domain: 'd',
      descriptors: [{ key: 'k', valueToMetric: true, shareThreshold: true }],
    });
  });
});

describe('metadata through a Struct', () => {
  it('carries every JSON kind from toStruct, through the bytes, back to the same JSON', () => {
    const metadata = {
      team: 'payments',
      weight: 2.5,
      on: true,
      nothing: null,
      nested: { list: ['a', 1, false, null, { deep: [] }], empty: {} },
    };
    const type = messageType(RATE_LIMIT_CONFIG.file, RATE_LIMIT_CONFIG.name);
    const bytes = type
      .encode(
        type.fromObject({
          name: 'm',
          domain: 'd',
          descriptors: [{ key: 'k', metadata: toStruct(metadata) }],
        }),
      )
      .finish();
    const doc = decodeResource({ type_url: RATE_LIMIT_CONFIG_TYPE_URL, value: bytes }, 0);
    expect(doc).not.toBeInstanceOf(ConfigError);
    expect((doc as ConfigDocument).descriptors[0]?.metadata).toEqual(metadata);
  });

  it('reads a sparse decoded Struct: no fields, a list without values, a Value of no kind', () => {
    expect(fromStruct({})).toEqual({});
    expect(fromStruct({ fields: { l: { listValue: {} }, v: {}, s: { structValue: {} } } })).toEqual(
      { l: [], v: null, s: {} },
    );
  });
});

describe('the node', () => {
  it('carries the id, the metadata in either spelling, and the user agent', () => {
    const settings = loadSettings({
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_NODE_ID: 'n1',
      CONFIG_GRPC_XDS_NODE_METADATA: 'zone=eu-1,tier:gold,url=http://x',
    }).config.source as XdsSourceSettings;
    expect(xdsNode(settings)).toMatchObject({
      id: 'n1',
      metadata: {
        fields: {
          zone: { stringValue: 'eu-1' },
          tier: { stringValue: 'gold' },
          url: { stringValue: 'http://x' },
        },
      },
      userAgentName: 'ratelimit-ts',
    });
  });
});
