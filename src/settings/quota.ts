// Quota section: the bounds and timings of the Rate Limit Quota Service (RLQS) streams.
import { deepFreeze } from '../lib/freeze';
import type { SettingsProblem } from './errors';
import { duration, int } from './fields';
import { group, type Values } from './section';
import type { QuotaSettings } from './types';

export const QUOTA = group('RLQS_', {
  MAX_BUCKETS_PER_STREAM: int(10_000, 1),
  MAX_STREAMS_PER_CONNECTION: int(100, 1),
  MAX_STREAMS: int(10_000, 1),
  MAX_BUCKETS: int(100_000, 1),
  MAX_BUCKETS_WITHOUT_RULE: int(1000, 0),
  MAX_BUCKET_ID_BYTES: int(1024, 16),
  MAX_BUCKET_ID_BYTES_TOTAL: int(32 * 1024 * 1024, 64 * 1024),
  TICK: duration('1s'),
  SHARE_TTL: duration('5s'),
});

/** The smallest tick: below it the ticks alone would keep a core busy with many buckets. */
const MIN_TICK_MS = 10;

export function quotaSettings(q: Values<typeof QUOTA>, problems: SettingsProblem[]): QuotaSettings {
  if (q.TICK < MIN_TICK_MS)
    problems.push({
      setting: 'RLQS_TICK',
      message: `must be at least ${MIN_TICK_MS}ms; accepted: a duration such as 1s`,
    });
  if (q.SHARE_TTL < 2 * q.TICK)
    problems.push({
      setting: 'RLQS_SHARE_TTL',
      message: `must be at least twice RLQS_TICK (${q.TICK}ms), or a live replica's demand would expire between two of its ticks`,
    });
  return deepFreeze({
    maxBucketsPerStream: q.MAX_BUCKETS_PER_STREAM,
    maxStreamsPerConnection: q.MAX_STREAMS_PER_CONNECTION,
    maxStreams: q.MAX_STREAMS,
    maxBuckets: q.MAX_BUCKETS,
    maxBucketsWithoutRule: q.MAX_BUCKETS_WITHOUT_RULE,
    maxBucketIdBytes: q.MAX_BUCKET_ID_BYTES,
    maxBucketIdBytesTotal: q.MAX_BUCKET_ID_BYTES_TOTAL,
    tickMs: q.TICK,
    shareTtlMs: q.SHARE_TTL,
  });
}
