// RateLimitConfig resources as the bundled simulator writes them: decoded and compiled as files are.
import { compileSources } from '../../../src/config';
import { messageType, RATE_LIMIT_CONFIG } from '../../../src/lib/proto';
import { decodeResource, RATE_LIMIT_CONFIG_TYPE_URL } from '../../../src/provider';
import { StatsStore } from '../../../src/stats';

/** A resource encoded from its JSON form (enum names as strings). */
function resource(config: Record<string, unknown>): { type_url: string; value: Uint8Array } {
  const type = messageType(RATE_LIMIT_CONFIG.file, RATE_LIMIT_CONFIG.name);
  return {
    type_url: RATE_LIMIT_CONFIG_TYPE_URL,
    value: type.encode(type.fromObject(config)).finish(),
  };
}

function compileResources(...configs: Record<string, unknown>[]): {
  ok: boolean;
  messages: string[];
  domains: readonly string[];
} {
  const outcome = compileSources(
    configs.map((c, i) => decodeResource(resource(c), i)),
    { stats: new StatsStore(), mergeDomainConfig: false, sanitizeDots: false },
  );
  return outcome.ok
    ? { ok: true, messages: [], domains: outcome.snapshot.domains }
    : { ok: false, messages: outcome.errors.map((e) => e.message), domains: [] };
}

it('accepts an unlimited rule that carries the default algorithm, as the simulator writes it', () => {
  const outcome = compileResources({
    name: 'example',
    domain: 'example',
    descriptors: [{ key: 'free', rateLimit: { unlimited: true, algorithm: 'FIXED_WINDOW' } }],
  });
  expect(outcome).toEqual({ ok: true, messages: [], domains: ['example'] });
});

it('refuses an unlimited rule with another algorithm, naming the descriptor path', () => {
  const outcome = compileResources({
    name: 'example',
    domain: 'example',
    descriptors: [
      { key: 'a', rateLimit: { unit: 'SECOND', requestsPerUnit: 1 } },
      {
        key: 'parent',
        descriptors: [{ key: 'free', rateLimit: { unlimited: true, algorithm: 'TOKEN_BUCKET' } }],
      },
    ],
  });
  expect(outcome.messages).toEqual([
    'resource example: an unlimited rule takes no algorithm or burst (at descriptors[1].descriptors[0].rate_limit)',
  ]);
});

it('names the path of every refusal of a resource: descriptors, blocks and items of rate_limits', () => {
  const outcome = compileResources({
    name: 'paths',
    domain: 'paths',
    descriptors: [
      { key: 'a', rateLimit: { unit: 'UNKNOWN', requestsPerUnit: 1 } },
      { key: '' },
      { key: 'b', value: 'x', shareThreshold: true },
      {
        key: 'c',
        rateLimits: [
          { unit: 'SECOND', requestsPerUnit: 1 },
          { unit: 'SECOND', requestsPerUnit: 2 },
        ],
      },
      { key: 'a', rateLimit: { unit: 'SECOND', requestsPerUnit: 1 } },
    ],
  });
  expect(outcome.messages).toEqual([
    "resource paths: invalid rate limit unit 'UNKNOWN'; accepted: second, minute, hour, day, week, month, year (at descriptors[0].rate_limit)",
    'resource paths: descriptor has empty key (at descriptors[1])',
    "resource paths: share_threshold can only be used with wildcard values (containing '*'), but found key 'b_x' (at descriptors[2])",
    "resource paths: descriptor 'paths.c' has two limits of unit second; each limit needs its own unit (at descriptors[3].rate_limits[1])",
    "resource paths: duplicate descriptor composite key 'paths.a' (at descriptors[4])",
  ]);
});

it('accepts a domain with no descriptors', () => {
  expect(compileResources({ name: 'empty', domain: 'empty' })).toEqual({
    ok: true,
    messages: [],
    domains: ['empty'],
  });
});
