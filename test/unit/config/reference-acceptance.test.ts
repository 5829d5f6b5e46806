// What the reference's loader accepts and this one must too: empty descriptors, null fields, the
// default algorithm on an unlimited rule, and refusals in the reference's order.
import { compileSources, parseConfigFile, type ConfigError } from '../../../src/config';
import { StatsStore } from '../../../src/stats';

/** The outcome of loading `texts` as files f0.yaml, f1.yaml ...: domains, or every refusal. */
function load(...texts: string[]): { domains: readonly string[] } | { errors: string[] } {
  const parsed = texts.map((text, i) => parseConfigFile(`f${i}.yaml`, text));
  const outcome = compileSources(parsed, {
    stats: new StatsStore(),
    mergeDomainConfig: false,
    sanitizeDots: false,
  });
  return outcome.ok
    ? { domains: outcome.snapshot.domains }
    : { errors: outcome.errors.map((e: ConfigError) => e.message) };
}

describe('a domain with no rules', () => {
  it.each([
    ['an empty list', 'domain: d\ndescriptors: []\n'],
    ['a key without a value', 'domain: d\ndescriptors:\n'],
    ['null', 'domain: d\ndescriptors: ~\n'],
    ['no descriptors at all', 'domain: d\n'],
  ])('loads with %s', (_what, text) => {
    expect(load(text)).toEqual({ domains: ['d'] });
  });

  it('loads a descriptor whose own descriptors are null', () => {
    expect(load('domain: d\ndescriptors:\n  - key: k\n    descriptors:\n')).toEqual({
      domains: ['d'],
    });
  });

  it('still refuses descriptors that are a string or a map', () => {
    expect(load('domain: d\ndescriptors: ""\n')).toEqual({
      errors: [
        `f0.yaml: config error, 'descriptors' must be a list, got "" (line 2, column 14, at descriptors)`,
      ],
    });
    expect(load('domain: d\ndescriptors: {}\n')).toEqual({
      errors: [
        `f0.yaml: config error, 'descriptors' must be a list, got a map (line 2, column 14, at descriptors)`,
      ],
    });
  });

  it('names the empty domain first, as the reference does', () => {
    expect(load('domain: ""\ndescriptors:\n')).toEqual({
      errors: ['f0.yaml: config file cannot have empty domain'],
    });
  });
});

it('reads other null fields as absent: no limit, false and 0', () => {
  const parsed = parseConfigFile(
    'n.yaml',
    'domain: n\ndescriptors:\n  - key: a\n    rate_limit:\n    shadow_mode: ~\n  - key: b\n    rate_limit:\n      unit: second\n      requests_per_unit:\n      unlimited: null\n',
  );
  expect(parsed).toMatchObject({
    descriptors: [
      { key: 'a', rateLimit: undefined, shadowMode: false },
      { key: 'b', rateLimit: { unit: 'second', requestsPerUnit: 0, unlimited: false } },
    ],
  });
});

describe('an unlimited rule', () => {
  const unlimited = (extra: string): string =>
    `domain: u\ndescriptors:\n  - key: k\n    rate_limit:\n      unlimited: true\n${extra}`;

  it.each(['fixed_window', 'FIXED_WINDOW'])('takes the default algorithm written as %s', (a) => {
    expect(load(unlimited(`      algorithm: ${a}\n`))).toEqual({ domains: ['u'] });
  });

  it('refuses another algorithm or a burst', () => {
    expect(load(unlimited('      algorithm: token_bucket\n'))).toEqual({
      errors: [
        'f0.yaml: an unlimited rule takes no algorithm or burst (line 5, column 7, at descriptors[0].rate_limit)',
      ],
    });
    expect(load(unlimited('      burst: 3\n'))).toEqual({
      errors: [
        'f0.yaml: an unlimited rule takes no algorithm or burst (line 5, column 7, at descriptors[0].rate_limit)',
      ],
    });
  });
});
