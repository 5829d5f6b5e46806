// The debug listener's JSON endpoints for operators: counters, rules, health and recent
// refusals, over a real engine on the memory backend; bad queries get a 400 with a reason.
import { ConfigError } from '../../../src/config';
import { descriptor, request } from '../../helpers/engine';
import { rawGet, startDebugListener, type DebugListener } from '../../helpers/debug-listener';

const CONFIG = `domain: shop
descriptors:
  - key: user
    rate_limit: { unit: minute, requests_per_unit: 3, name: per-user }
  - key: path
    value: /cart
    shadow_mode: true
    rate_limit: { unit: hour, requests_per_unit: 1 }
    descriptors:
      - key: method
        value: POST
        rate_limit: { unit: second, requests_per_unit: 10 }
  - key: free
    rate_limit: { unlimited: true }
`;

// 20 s into a minute.
const NOW_MS = 1_700_000_000_000;
const MINUTE_START = 1_700_000_000 - (1_700_000_000 % 60);

let listener: DebugListener;

beforeEach(async () => {
  listener = await startDebugListener([CONFIG], {
    env: { DEBUG_RECENT_DECISIONS: '5' },
    nowMs: NOW_MS,
  });
});

afterEach(async () => {
  await listener.close();
});

const call = (domain: string, ...pairs: [string, string][]) =>
  listener.engine.shouldRateLimit(request(domain, [descriptor(pairs)]));

describe('GET /counters', () => {
  it('reads the count requests produced, with the limit, window and remaining', async () => {
    await call('shop', ['user', 'alice']);
    await call('shop', ['user', 'alice']);
    const res = await listener.get('/counters?domain=shop&descriptor=user=alice');
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual({
      domain: 'shop',
      descriptors: [
        {
          descriptor: [{ key: 'user', value: 'alice' }],
          descriptorText: 'user=alice',
          rule: {
            statKey: 'shop.user',
            name: 'per-user',
            unlimited: false,
            limits: [{ algorithm: 'fixed_window', limit: 3, unit: 'MINUTE', name: 'per-user' }],
            shadowMode: false,
            quotaMode: false,
          },
          counters: [
            {
              algorithm: 'fixed_window',
              limit: 3,
              unit: 'MINUTE',
              name: 'per-user',
              key: `shop_user_alice_${MINUTE_START}`,
              count: 2,
              remaining: 1,
              windowStart: new Date(MINUTE_START * 1000).toISOString(),
              windowEnd: new Date((MINUTE_START + 60) * 1000).toISOString(),
              resetInSeconds: MINUTE_START + 60 - 1_700_000_000,
              inLocalCache: false,
            },
          ],
        },
      ],
    });
    // Reading did not count: the next request still has one left.
    expect((await call('shop', ['user', 'alice'])).overallCode).toBe('OK');
  });

  it('takes several descriptors, nested entries, and escaped commas and equals signs', async () => {
    await call('shop', ['path', '/cart'], ['method', 'POST']);
    await call('shop', ['user', 'a,b=c']);
    const res = await listener.get(
      `/counters?domain=shop&descriptor=${encodeURIComponent('path=/cart,method=POST')}&descriptor=${encodeURIComponent('user=a\\,b\\=c')}&descriptor=free=x&descriptor=nothing=x`,
    );
    expect(res.status).toBe(200);
    const body = res.json() as {
      descriptors: {
        descriptorText: string;
        rule: { statKey: string } | null;
        counters: { count: number }[];
      }[];
    };
    expect(
      body.descriptors.map((d) => [
        d.descriptorText,
        d.rule?.statKey ?? null,
        d.counters.map((c) => c.count),
      ]),
    ).toEqual([
      ['path=/cart,method=POST', 'shop.path_/cart.method_POST', [1]],
      ['user=a\\,b\\=c', 'shop.user', [1]],
      ['free=x', 'shop.free', []],
      ['nothing=x', null, []],
    ]);
  });

  it.each([
    ['', /domain is required/],
    ['?descriptor=user=a', /domain is required/],
    ['?domain=&descriptor=user=a', /domain is required/],
    ['?domain=shop&domain=x&descriptor=user=a', /domain is required, once/],
    ['?domain=shop', /at least one descriptor/],
    ['?domain=shop&descriptor=', /descriptor is empty/],
    ['?domain=shop&descriptor=user', /"user" has no '='/],
    ['?domain=shop&descriptor=user=a,path', /"path" has no '='/],
    ['?domain=shop&descriptor==a', /empty key/],
    ['?domain=shop&descriptor=user=a&descripter=x', /unknown parameter "descripter"/],
    [`?domain=shop${'&descriptor=user=a'.repeat(101)}`, /at most 100 descriptors/],
  ])('refuses %s with 400 and the reason', async (query, reason) => {
    const res = await listener.get(`/counters${query}`);
    expect(res.status).toBe(400);
    expect((res.json() as { error: string }).error).toMatch(reason);
  });

  it('answers 404 naming an unknown domain and the loaded ones', async () => {
    const res = await listener.get('/counters?domain=nope&descriptor=user=a');
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({
      error: 'domain "nope" is not configured; loaded domains: shop',
    });
  });

  it('answers 503 while the backend fails, and never crashes', async () => {
    const failing = await startDebugListener([CONFIG], {
      wrapStore: (store) =>
        Object.assign(Object.create(store) as typeof store, {
          read: () => Promise.reject(new Error('connection refused')),
        }),
    });
    try {
      const res = await failing.get('/counters?domain=shop&descriptor=user=a');
      expect(res.status).toBe(503);
      expect((res.json() as { error: string }).error).toMatch(
        /did not answer: .*connection refused/,
      );
      expect((await failing.get('/health')).status).toBe(200);
    } finally {
      await failing.close();
    }
  });

  it('keeps answering after a malformed target', async () => {
    expect(await rawGet(listener.base, '/counters?domain=%E0%A4%A&descriptor=%')).toBeLessThan(500);
    expect((await listener.get('/counters?domain=shop&descriptor=user=a')).status).toBe(200);
  });
});

describe('GET /rules', () => {
  it('lists every rule with path, limits, flags and source, and the load it came from', async () => {
    listener.config.loaded({ kind: 'files', directory: '/srv/runtime/config' });
    listener.clock.advance(5000);
    listener.config.refused([
      new ConfigError('INVALID_UNIT', 'bad.yaml', "invalid rate limit unit 'x'"),
    ]);
    const body = (await listener.get('/rules')).json() as Record<string, unknown>;
    expect(body).toMatchObject({
      loaded: true,
      loadedAt: new Date(NOW_MS).toISOString(),
      origin: { kind: 'files', directory: '/srv/runtime/config' },
      domains: ['shop'],
      lastRefused: {
        at: new Date(NOW_MS + 5000).toISOString(),
        errors: ["bad.yaml: invalid rate limit unit 'x'"],
      },
    });
    expect(body.rules).toEqual([
      {
        domain: 'shop',
        path: [{ key: 'user', value: null }],
        pathText: 'user',
        statKey: 'shop.user',
        name: 'per-user',
        unlimited: false,
        limits: [{ algorithm: 'fixed_window', limit: 3, unit: 'MINUTE', name: 'per-user' }],
        flags: {
          shadowMode: false,
          quotaMode: false,
          detailedMetric: false,
          valueToMetric: false,
          shareThreshold: false,
        },
        replaces: [],
        source: 'file0.yaml',
      },
      expect.objectContaining({
        pathText: 'path=/cart',
        flags: expect.objectContaining({ shadowMode: true }),
        limits: [{ algorithm: 'fixed_window', limit: 1, unit: 'HOUR', name: null }],
      }),
      expect.objectContaining({ pathText: 'path=/cart,method=POST' }),
      expect.objectContaining({ pathText: 'free', unlimited: true, limits: [] }),
    ]);
  });

  it('gives each rule the xDS version it came with', async () => {
    listener.config.loaded({ kind: 'xds', server: '127.0.0.1:18000', version: '7-abc' });
    const body = (await listener.get('/rules')).json() as { rules: { version?: string }[] };
    expect(body.rules.map((r) => r.version)).toEqual(['7-abc', '7-abc', '7-abc', '7-abc']);
  });
});

describe('GET /health', () => {
  it('names each component, its state and since when, 503 while unhealthy', async () => {
    listener.clock.advance(1000);
    listener.health.set('backend', false);
    const res = await listener.get('/health');
    expect(res.status).toBe(503);
    expect(res.json()).toMatchObject({
      healthy: false,
      since: new Date(NOW_MS + 1000).toISOString(),
      components: [
        {
          name: 'backend',
          healthy: false,
          since: new Date(NOW_MS + 1000).toISOString(),
          affectsHealth: true,
        },
        // Followed though HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED is off, for the status page.
        { name: 'config', healthy: false, affectsHealth: false },
        { name: 'sigterm', healthy: true, since: new Date(NOW_MS).toISOString() },
      ],
    });
  });
});

describe('GET /decisions/recent', () => {
  it('lists over-limit and shadow decisions newest first, and only newer ones after a seq', async () => {
    for (let i = 0; i < 4; i++) await call('shop', ['user', 'bob']);
    listener.clock.advance(1500);
    await call('shop', ['path', '/cart']);
    await call('shop', ['path', '/cart']);
    const body = (await listener.get('/decisions/recent')).json() as {
      decisions: Record<string, unknown>[];
    };
    expect(body).toMatchObject({ enabled: true, capacity: 5, total: 2 });
    expect(body.decisions).toEqual([
      {
        seq: 2,
        time: new Date(NOW_MS + 1500).toISOString(),
        domain: 'shop',
        descriptor: [{ key: 'path', value: '/cart' }],
        descriptorText: 'path=/cart',
        rule: 'shop.path_/cart',
        algorithm: 'fixed_window',
        limit: 1,
        unit: 'HOUR',
        name: null,
        hits: 1,
        remaining: 0,
        shadow: true,
        fromLocalCache: false,
      },
      expect.objectContaining({ seq: 1, descriptorText: 'user=bob', shadow: false, limit: 3 }),
    ]);
    const after = (await listener.get('/decisions/recent?after=1')).json() as {
      decisions: { seq: number }[];
    };
    expect(after.decisions.map((d) => d.seq)).toEqual([2]);
    const one = (await listener.get('/decisions/recent?limit=1')).json() as {
      decisions: { seq: number }[];
    };
    expect(one.decisions.map((d) => d.seq)).toEqual([2]);
  });

  it.each(['?after=-1', '?after=x', '?limit=0', '?limit=1.5', '?since=3'])(
    'refuses %s with 400',
    async (query) => {
      const res = await listener.get(`/decisions/recent${query}`);
      expect(res.status).toBe(400);
      expect((res.json() as { error: string }).error).not.toBe('');
    },
  );

  it('says recording is off when DEBUG_RECENT_DECISIONS is 0', async () => {
    const off = await startDebugListener([CONFIG], { env: { DEBUG_RECENT_DECISIONS: '0' } });
    try {
      for (let i = 0; i < 5; i++)
        await off.engine.shouldRateLimit(request('shop', [descriptor([['user', 'x']])]));
      expect((await off.get('/decisions/recent')).json()).toEqual({
        enabled: false,
        capacity: 0,
        total: 0,
        decisions: [],
      });
    } finally {
      await off.close();
    }
  });
});
