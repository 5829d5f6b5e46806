// The reference's matching rules and statistics keys, on compiled snapshots.
import {
  ConfigError,
  parseConfigFile,
  type ConfigSnapshot,
  type DescriptorQuery,
} from '../../../src/config';
import { StatsStore } from '../../../src/stats';
import { snapshotOf } from '../../helpers/engine';

function snap(
  yaml: string | string[],
  options: { merge?: boolean; sanitizeDots?: boolean } = {},
): ConfigSnapshot {
  return snapshotOf(Array.isArray(yaml) ? yaml : [yaml], new StatsStore(), options);
}

function q(...pairs: [string, string][]): DescriptorQuery {
  return { entries: pairs.map(([key, value]) => ({ key, value })), limit: undefined };
}

/** What a match amounts to: the limit, the statistics key and the shared values. */
function find(
  s: ConfigSnapshot,
  domain: string,
  query: DescriptorQuery,
): [number, string | undefined, string, ...(string | undefined)[]] | undefined {
  const m = s.findLimit(domain, query);
  if (m === undefined) return undefined;
  return [m.rule.requestsPerUnit, m.rule.unit, m.stats.key, ...(m.sharedValues ?? [])];
}

describe('level by level', () => {
  const s = snap(`
domain: d
descriptors:
  - key: a
    rate_limit: { unit: second, requests_per_unit: 1 }
  - key: a
    value: special
    rate_limit: { unit: second, requests_per_unit: 2 }
  - key: parent
    value: p
    descriptors:
      - key: child
        rate_limit: { unit: minute, requests_per_unit: 3 }
      - key: child
        value: c
        descriptors:
          - key: grandchild
            rate_limit: { unit: hour, requests_per_unit: 4 }
  - key: whitelisted
  - key: zero
    rate_limit: { unit: day, requests_per_unit: 0 }
`);

  it('prefers the exact value, then the key alone', () => {
    expect(find(s, 'd', q(['a', 'special']))).toEqual([2, 'SECOND', 'd.a_special']);
    expect(find(s, 'd', q(['a', 'other']))).toEqual([1, 'SECOND', 'd.a']);
    expect(find(s, 'd', q(['a', '']))).toEqual([1, 'SECOND', 'd.a']);
  });

  it('matches a request of N entries only at level N', () => {
    expect(find(s, 'd', q(['a', 'x'], ['more', 'y']))).toBeUndefined();
    expect(find(s, 'd', q(['parent', 'p']))).toBeUndefined();
    expect(find(s, 'd', q(['parent', 'p'], ['child', 'x']))).toEqual([
      3,
      'MINUTE',
      'd.parent_p.child',
    ]);
    expect(find(s, 'd', q(['parent', 'p'], ['child', 'c']))).toBeUndefined();
    expect(find(s, 'd', q(['parent', 'p'], ['child', 'c'], ['grandchild', 'g']))).toEqual([
      4,
      'HOUR',
      'd.parent_p.child_c.grandchild',
    ]);
    expect(find(s, 'd', q(['parent', 'other'], ['child', 'x']))).toBeUndefined();
  });

  it('whitelists a descriptor without rate_limit and children, and blocks with 0', () => {
    expect(find(s, 'd', q(['whitelisted', 'x']))).toBeUndefined();
    expect(find(s, 'd', q(['zero', 'x']))).toEqual([0, 'DAY', 'd.zero']);
  });

  it('knows its domains', () => {
    expect(s.domains).toEqual(['d']);
    expect(s.hasDomain('d')).toBe(true);
    expect(s.hasDomain('e')).toBe(false);
    expect(find(s, 'e', q(['a', 'x']))).toBeUndefined();
  });

  it('allocates nothing for a static match and is immutable', () => {
    const first = s.findLimit('d', q(['a', 'x']));
    expect(s.findLimit('d', q(['a', 'y']))).toBe(first);
    expect(Object.isFrozen(s)).toBe(true);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first?.rule)).toBe(true);
    expect(Object.isFrozen(first?.rule.replaces)).toBe(true);
  });

  it('dumps every rule, one per line', () => {
    expect(
      s
        .dump()
        .split('\n')
        .filter((l) => l !== ''),
    ).toEqual([
      'd.a_special: unit=SECOND requests_per_unit=2, shadow_mode: false, quota_mode: false',
      'd.a: unit=SECOND requests_per_unit=1, shadow_mode: false, quota_mode: false',
      'd.parent_p.child_c.grandchild: unit=HOUR requests_per_unit=4, shadow_mode: false, quota_mode: false',
      'd.parent_p.child: unit=MINUTE requests_per_unit=3, shadow_mode: false, quota_mode: false',
      'd.zero: unit=DAY requests_per_unit=0, shadow_mode: false, quota_mode: false',
    ]);
  });

  it('dumps an unlimited rule in the same fixed format, as the reference does', () => {
    const u = snap('domain: u\ndescriptors:\n  - key: k\n    rate_limit: { unlimited: true }\n');
    expect(u.dump()).toBe(
      'u.k: unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false\n',
    );
  });
});

describe('wildcards', () => {
  const s = snap(`
domain: w
descriptors:
  - key: path
    value: /exact
    rate_limit: { unit: second, requests_per_unit: 1 }
  - key: path
    value: /ex*
    rate_limit: { unit: second, requests_per_unit: 2 }
  - key: path
    value: /e*
    rate_limit: { unit: second, requests_per_unit: 3 }
  - key: path
    value: /bar*baz
    rate_limit: { unit: second, requests_per_unit: 4 }
  - key: path
    value: /foo*bar*baz
    rate_limit: { unit: second, requests_per_unit: 5 }
  - key: path
    rate_limit: { unit: second, requests_per_unit: 6 }
  - key: any
    value: '*'
    rate_limit: { unit: second, requests_per_unit: 7 }
`);

  it('tries the exact value, then the wildcards in file order, then the key alone', () => {
    expect(find(s, 'w', q(['path', '/exact']))?.[0]).toBe(1);
    expect(find(s, 'w', q(['path', '/exactly']))?.[0]).toBe(2);
    expect(find(s, 'w', q(['path', '/else']))?.[0]).toBe(3);
    expect(find(s, 'w', q(['path', '/other']))?.[0]).toBe(6);
  });

  it('matches a wildcard in the middle and several wildcards in order', () => {
    expect(find(s, 'w', q(['path', '/bar-x-baz']))?.[0]).toBe(4);
    expect(find(s, 'w', q(['path', '/barbaz']))?.[0]).toBe(4);
    expect(find(s, 'w', q(['path', '/bar-x-baz-y']))?.[0]).toBe(6);
    expect(find(s, 'w', q(['path', '/foo1bar2baz']))?.[0]).toBe(5);
    expect(find(s, 'w', q(['path', '/foo-baz-bar']))?.[0]).toBe(6);
    expect(find(s, 'w', q(['path', '/foobaz']))?.[0]).toBe(6);
  });

  it('lets `*` match the empty value', () => {
    expect(find(s, 'w', q(['any', '']))?.[0]).toBe(7);
  });

  it('keeps the pattern in the statistics key and a counter per value', () => {
    expect(find(s, 'w', q(['path', '/bar1baz']))).toEqual([4, 'SECOND', 'w.path_/bar*baz']);
    expect(s.findLimit('w', q(['path', '/bar2baz']))?.sharedValues).toBeUndefined();
  });
});

describe('share_threshold', () => {
  const s = snap(`
domain: s
descriptors:
  - key: files
    value: files/*
    share_threshold: true
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: route
    value: api/*
    share_threshold: true
    value_to_metric: true
    descriptors:
      - key: method
        rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: service
    value: svc/*
    share_threshold: true
    descriptors:
      - key: endpoint
        detailed_metric: true
        rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: path
    value: path/*
    share_threshold: true
    descriptors:
      - key: file
        value: file/*
        descriptors:
          - key: type
            rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: user
    value: user/*
    share_threshold: true
    descriptors:
      - key: resource
        value: res/*
        share_threshold: true
        descriptors:
          - key: action
            rate_limit: { unit: hour, requests_per_unit: 1 }
`);

  it('puts the pattern in the cache key and the statistics key', () => {
    expect(find(s, 's', q(['files', 'files/a.txt']))).toEqual([
      10,
      'HOUR',
      's.files_files/*',
      'files/*',
    ]);
    expect(find(s, 's', q(['files', 'files/b.txt']))).toEqual([
      10,
      'HOUR',
      's.files_files/*',
      'files/*',
    ]);
  });

  it('takes priority over value_to_metric and detailed_metric', () => {
    expect(find(s, 's', q(['route', 'api/v1'], ['method', 'GET']))).toEqual([
      1,
      'HOUR',
      's.route_api/*.method',
      'api/*',
      undefined,
    ]);
    expect(find(s, 's', q(['service', 'svc/a'], ['endpoint', 'get']))).toEqual([
      1,
      'HOUR',
      's.service_svc/*.endpoint_get',
      'svc/*',
      undefined,
    ]);
  });

  it('works at several levels', () => {
    expect(find(s, 's', q(['path', 'path/x'], ['file', 'file/y'], ['type', 'z']))).toEqual([
      1,
      'HOUR',
      's.path_path/*.file_file/*.type',
      'path/*',
      undefined,
      undefined,
    ]);
    expect(find(s, 's', q(['user', 'user/1'], ['resource', 'res/2'], ['action', 'read']))).toEqual([
      1,
      'HOUR',
      's.user_user/*.resource_res/*.action',
      'user/*',
      'res/*',
      undefined,
    ]);
  });
});

describe('detailed_metric', () => {
  const s = snap(`
domain: nested
descriptors:
  - key: key-1
    detailed_metric: true
    rate_limit: { unit: minute, requests_per_unit: 10 }
    descriptors:
      - key: key-2
        detailed_metric: true
        rate_limit: { unit: minute, requests_per_unit: 20 }
  - key: plain
    rate_limit: { unit: minute, requests_per_unit: 30 }
    descriptors:
      - key: leaf
        rate_limit: { unit: minute, requests_per_unit: 40 }
  - key: key_1
    value: fixed
    descriptors:
      - key: key_2
        detailed_metric: true
        rate_limit: { unit: minute, requests_per_unit: 50 }
`);

  it('puts every runtime value in the statistics key', () => {
    expect(find(s, 'nested', q(['key-1', 'value-1']))?.[2]).toBe('nested.key-1_value-1');
    expect(find(s, 'nested', q(['key-1', 'value-1'], ['key-2', 'value-2']))?.[2]).toBe(
      'nested.key-1_value-1.key-2_value-2',
    );
    expect(find(s, 'nested', q(['key_1', 'fixed'], ['key_2', 'v']))?.[2]).toBe(
      'nested.key_1_fixed.key_2_v',
    );
  });

  it('writes an empty runtime value as key_', () => {
    expect(find(s, 'nested', q(['key-1', '']))?.[2]).toBe('nested.key-1_');
  });

  it('leaves rules without it alone', () => {
    expect(find(s, 'nested', q(['plain', 'v']))?.[2]).toBe('nested.plain');
    expect(find(s, 'nested', q(['plain', 'v'], ['leaf', 'w']))?.[2]).toBe('nested.plain.leaf');
  });
});

describe('value_to_metric', () => {
  const s = snap(`
domain: d
descriptors:
  - key: k1
    value_to_metric: true
    descriptors:
      - key: k2
        rate_limit: { unit: minute, requests_per_unit: 1 }
      - key: k2
        value: Y
        descriptors:
          - key: k3
            value_to_metric: true
            rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: route
    value: api*
    value_to_metric: true
    rate_limit: { unit: minute, requests_per_unit: 3 }
  - key: route
    value: web*
    rate_limit: { unit: minute, requests_per_unit: 4 }
  - key: both
    value_to_metric: true
    detailed_metric: true
    rate_limit: { unit: minute, requests_per_unit: 5 }
  - key: none
    descriptors:
      - key: k2
        rate_limit: { unit: minute, requests_per_unit: 6 }
`);

  it('adds the runtime value at the levels that ask for it', () => {
    expect(find(s, 'd', q(['k1', 'A'], ['k2', 'B']))?.[2]).toBe('d.k1_A.k2');
    expect(find(s, 'd', q(['k1', 'A'], ['k2', 'Y'], ['k3', 'Z']))?.[2]).toBe('d.k1_A.k2_Y.k3_Z');
    expect(find(s, 'd', q(['none', 'A'], ['k2', 'B']))?.[2]).toBe('d.none.k2');
  });

  it('puts the full runtime value of a wildcard match in the key', () => {
    expect(find(s, 'd', q(['route', 'api-users']))?.[2]).toBe('d.route_api-users');
    expect(find(s, 'd', q(['route', 'web-users']))?.[2]).toBe('d.route_web*');
  });

  it('leaves an empty runtime value out', () => {
    expect(find(s, 'd', q(['k1', ''], ['k2', 'B']))?.[2]).toBe('d.k1.k2');
  });

  it('gives way to detailed_metric', () => {
    expect(find(s, 'd', q(['both', 'v']))?.[2]).toBe('d.both_v');
  });
});

describe('statistics keys with SANITIZE_DESCRIPTOR_METRIC_DOTS', () => {
  const yaml = `
domain: my.domain
descriptors:
  - key: host.name
    value: api.example.com
    rate_limit: { unit: second, requests_per_unit: 1 }
  - key: ip
    detailed_metric: true
    rate_limit: { unit: second, requests_per_unit: 1 }
`;

  it('replaces dots in keys and values, not in the domain, and matches the raw values', () => {
    const s = snap(yaml, { sanitizeDots: true });
    expect(find(s, 'my.domain', q(['host.name', 'api.example.com']))?.[2]).toBe(
      'my.domain.host_name_api_example_com',
    );
    expect(find(s, 'my.domain', q(['ip', '10.1.2.3']))?.[2]).toBe('my.domain.ip_10_1_2_3');
    expect(find(snap(yaml), 'my.domain', q(['host.name', 'api.example.com']))?.[2]).toBe(
      'my.domain.host.name_api.example.com',
    );
  });
});

describe('limit overrides', () => {
  const s = snap(
    'domain: o\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 100 }\n',
  );

  it('use the request limit under the descriptor key', () => {
    const m = s.findLimit('o', {
      entries: [
        { key: 'k', value: 'v' },
        { key: 'x', value: '' },
      ],
      limit: { requestsPerUnit: 5, unit: 'MINUTE' },
    });
    expect(m?.rule).toMatchObject({
      requestsPerUnit: 5,
      unit: 'MINUTE',
      isShadow: false,
      isUnlimited: false,
    });
    expect(m?.stats.key).toBe('o.k_v.x');
  });

  it('need a known domain', () => {
    expect(
      s.findLimit('p', {
        entries: [{ key: 'k', value: 'v' }],
        limit: { requestsPerUnit: 5, unit: 'MINUTE' },
      }),
    ).toBeUndefined();
  });
});

describe('rule fields', () => {
  const s = snap(`
domain: f
descriptors:
  - key: unl
    rate_limit: { unlimited: true }
  - key: shadow
    shadow_mode: yes
    quota_mode: on
    rate_limit: { unit: Minute, requests_per_unit: 1, name: first }
  - key: rep
    rate_limit:
      unit: WEEK
      requests_per_unit: 2
      replaces: [{ name: first }, { name: other }]
  - key: meta
    metadata:
      team: payments
      limits: [1, 2]
      nested: { enabled: true, ratio: 0.5, nothing: null }
    rate_limit: { unit: year, requests_per_unit: 3 }
  - key: status
    value: 200
    rate_limit: { unit: month, requests_per_unit: 4 }
`);

  it('compiles unlimited, shadow, quota, names and replaces', () => {
    expect(s.findLimit('f', q(['unl', 'x']))?.rule).toMatchObject({
      isUnlimited: true,
      unit: undefined,
    });
    expect(s.findLimit('f', q(['shadow', 'x']))?.rule).toMatchObject({
      isShadow: true,
      isQuota: true,
      unit: 'MINUTE',
      name: 'first',
    });
    expect(s.findLimit('f', q(['rep', 'x']))?.rule).toMatchObject({
      unit: 'WEEK',
      replaces: ['first', 'other'],
      name: undefined,
    });
  });

  it('keeps metadata as JSON', () => {
    expect(s.findLimit('f', q(['meta', 'x']))?.rule.metadata).toEqual({
      team: 'payments',
      limits: [1, 2],
      nested: { enabled: true, ratio: 0.5, nothing: null },
    });
    expect(s.findLimit('f', q(['meta', 'x']))?.rule.unit).toBe('YEAR');
  });

  it('reads a number in a string field as written', () => {
    expect(s.findLimit('f', q(['status', '200']))?.rule.unit).toBe('MONTH');
  });
});

describe('MERGE_DOMAIN_CONFIG', () => {
  const one =
    'domain: m\ndescriptors:\n  - key: a\n    rate_limit: { unit: second, requests_per_unit: 1 }\n';
  const two =
    'domain: m\ndescriptors:\n  - key: b\n    rate_limit: { unit: second, requests_per_unit: 2 }\n';

  it('merges the descriptors of one domain from several files', () => {
    const s = snap([one, two], { merge: true });
    expect(find(s, 'm', q(['a', 'x']))?.[0]).toBe(1);
    expect(find(s, 'm', q(['b', 'x']))?.[0]).toBe(2);
  });

  it('refuses them otherwise', () => {
    expect(() => snap([one, two])).toThrow("file1.yaml: duplicate domain 'm' in config file");
  });
});

describe('YAML reading', () => {
  it('honours anchors, aliases and merge keys', () => {
    const s = snap(`
domain: y
descriptors:
  - key: a
    rate_limit: &common { unit: second, requests_per_unit: 9 }
  - key: b
    rate_limit: *common
  - key: c
    rate_limit:
      <<: *common
      requests_per_unit: 1
`);
    expect(find(s, 'y', q(['b', 'x']))?.[0]).toBe(9);
    expect(find(s, 'y', q(['c', 'x']))?.slice(0, 2)).toEqual([1, 'SECOND']);
  });

  it('accepts a known key in the wrong place and warns about it', () => {
    const doc = parseConfigFile(
      'w.yaml',
      'domain: w\nunit: second\ndescriptors:\n  - key: a\n    unit: minute\n',
    );
    expect(doc).not.toBeInstanceOf(ConfigError);
    if (doc instanceof ConfigError) return;
    expect(doc.warnings).toEqual([
      "w.yaml: key 'unit' has no meaning at the top level and is ignored (line 2, column 1)",
      "w.yaml: key 'unit' has no meaning in a descriptor and is ignored (line 5, column 5)",
    ]);
  });

  it('loads an empty file as a document without a domain', () => {
    const doc = parseConfigFile('e.yaml', '');
    expect(doc).toEqual({ source: 'e.yaml', domain: '', descriptors: [], warnings: [] });
  });
});
