// The RLQS_* settings: defaults, and the combinations start-up refuses.
import { loadSettings } from '../../../src/settings';
import { settingsProblems } from '../../helpers/settings';

test('defaults', () => {
  expect(loadSettings({}).quota).toEqual({
    maxBucketsPerStream: 10_000,
    maxStreamsPerConnection: 100,
    maxStreams: 10_000,
    maxBuckets: 100_000,
    maxBucketsWithoutRule: 1000,
    maxBucketIdBytes: 1024,
    maxBucketIdBytesTotal: 32 * 1024 * 1024,
    tickMs: 1000,
    shareTtlMs: 5000,
  });
});

test('a tick too short, a share TTL under two ticks, and bounds below 1 are refused', () => {
  expect(
    settingsProblems({
      RLQS_TICK: '5ms',
      RLQS_SHARE_TTL: '8ms',
      RLQS_MAX_BUCKETS_PER_STREAM: '0',
      RLQS_MAX_STREAMS_PER_CONNECTION: '0',
    }),
  ).toEqual([
    'RLQS_MAX_BUCKETS_PER_STREAM: "0" is not valid; accepted: a whole number of at least 1',
    'RLQS_MAX_STREAMS_PER_CONNECTION: "0" is not valid; accepted: a whole number of at least 1',
    'RLQS_TICK: must be at least 10ms; accepted: a duration such as 1s',
    "RLQS_SHARE_TTL: must be at least twice RLQS_TICK (5ms), or a live replica's demand would expire between two of its ticks",
  ]);
  expect(loadSettings({ RLQS_TICK: '200ms', RLQS_SHARE_TTL: '600ms' }).quota).toMatchObject({
    tickMs: 200,
    shareTtlMs: 600,
  });
});
