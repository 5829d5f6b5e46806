// The loaded rules as a list for operators: each with its path, flags and source file.
import { StatsStore } from '../../../src/stats';
import { snapshotOf } from '../../helpers/engine';

it('lists every rule with its path from the domain down, in order, with its source', () => {
  const snapshot = snapshotOf(
    [
      `domain: b
descriptors:
  - key: user
    rate_limit: { unit: second, requests_per_unit: 5 }
    descriptors:
      - key: path
        value: /api/*
        share_threshold: true
        shadow_mode: true
        rate_limit: { unit: minute, requests_per_unit: 7, name: api }
  - key: free
    rate_limit: { unlimited: true }
  - key: parent
    descriptors:
      - key: child
        value_to_metric: true
        rate_limit: { unit: hour, requests_per_unit: 1 }
`,
      `domain: a
descriptors:
  - key: k
    value: v
    quota_mode: true
    detailed_metric: true
    rate_limit: { unit: day, requests_per_unit: 9 }
`,
    ],
    new StatsStore(),
  );
  expect(
    snapshot.rules().map((r) => ({
      domain: r.domain,
      path: r.path,
      statKey: r.rule.statKey,
      limit: [r.rule.requestsPerUnit, r.rule.unit, r.rule.isUnlimited],
      flags: [
        r.rule.isShadow,
        r.rule.isQuota,
        r.rule.isDetailedMetric,
        r.isValueToMetric,
        r.isShareThreshold,
      ],
      source: r.source,
    })),
  ).toEqual([
    {
      domain: 'a',
      path: [{ key: 'k', value: 'v' }],
      statKey: 'a.k_v',
      limit: [9, 'DAY', false],
      flags: [false, true, true, false, false],
      source: 'file1.yaml',
    },
    {
      domain: 'b',
      path: [{ key: 'user', value: undefined }],
      statKey: 'b.user',
      limit: [5, 'SECOND', false],
      flags: [false, false, false, false, false],
      source: 'file0.yaml',
    },
    {
      domain: 'b',
      path: [
        { key: 'user', value: undefined },
        { key: 'path', value: '/api/*' },
      ],
      statKey: 'b.user.path_/api/*',
      limit: [7, 'MINUTE', false],
      flags: [true, false, false, false, true],
      source: 'file0.yaml',
    },
    {
      domain: 'b',
      path: [{ key: 'free', value: undefined }],
      statKey: 'b.free',
      limit: [0, undefined, true],
      flags: [false, false, false, false, false],
      source: 'file0.yaml',
    },
    {
      domain: 'b',
      path: [
        { key: 'parent', value: undefined },
        { key: 'child', value: undefined },
      ],
      statKey: 'b.parent.child',
      limit: [1, 'HOUR', false],
      flags: [false, false, false, true, false],
      source: 'file0.yaml',
    },
  ]);
});
