// The two steps every usage of every report takes: its bucket id checked (once per frozen id a
// stream's decoder hands out again) and turned into the bucket's key (one per distinct id).
import fc from 'fast-check';
import { checkReports } from '../../../src/quota';
import { bucketKey } from '../../../src/quota/messages';

const usage = (bucket: Record<string, string>): Record<string, unknown> => ({
  bucketId: { bucket },
  timeElapsed: { seconds: 1 },
});

test('a frozen bucket id is checked once: the same pairs again, and a bad one refused every time', () => {
  const id = Object.freeze({ name: 'api' });
  const first = checkReports({ domain: 'edge', bucketQuotaUsages: [usage(id)] }, true);
  const again = checkReports({ bucketQuotaUsages: [usage(id)] }, false);
  expect(again.usages[0]?.bucket).toBe(first.usages[0]?.bucket);
  expect([...(first.usages[0]?.bucket ?? [])]).toEqual([['name', 'api']]);
  const bad = Object.freeze({ name: '' });
  for (let i = 0; i < 2; i++)
    expect(checkReports({ domain: 'edge', bucketQuotaUsages: [usage(bad)] }, true)).toEqual({
      domain: 'edge',
      usages: [],
      refused: [{ field: 'bucket_quota_usages[0].bucket_id.bucket["name"]', reason: 'is empty' }],
    });
  // An object that is not frozen may change between reports: it is checked every time.
  const open: Record<string, string> = { name: 'api' };
  checkReports({ domain: 'edge', bucketQuotaUsages: [usage(open)] }, true);
  open.name = '';
  expect(
    checkReports({ domain: 'edge', bucketQuotaUsages: [usage(open)] }, true).refused,
  ).toHaveLength(1);
});

test('bucket keys: one per domain and set of pairs, whatever their order', () => {
  const pairs = fc.uniqueArray(fc.tuple(fc.string(), fc.string()), {
    selector: ([key]) => key,
    maxLength: 4,
  });
  fc.assert(
    fc.property(fc.string(), pairs, fc.string(), pairs, (d1, p1, d2, p2) => {
      const k1 = bucketKey(d1, new Map(p1));
      expect(bucketKey(d1, new Map([...p1].reverse()))).toBe(k1);
      const same = d1 === d2 && JSON.stringify([...p1].sort()) === JSON.stringify([...p2].sort());
      expect(bucketKey(d2, new Map(p2)) === k1).toBe(same);
    }),
    { numRuns: 2000 },
  );
  // Separators inside keys and values do not make two ids one.
  expect(bucketKey('a', new Map([['b', '1:c']]))).not.toBe(
    bucketKey('a', new Map([['b=1:c', '']])),
  );
});
