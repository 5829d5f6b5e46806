// Limiter section: how decisions are made (near-limit ratio, keys, modes, local cache, headers).
import { deepFreeze } from '../lib/freeze';
import type { SettingsProblem } from './errors';
import { bool, float, int, oneOf, str } from './fields';
import { group, type Values } from './section';
import type { LimiterSettings } from './types';

export const LIMITER = group('', {
  EXPIRATION_JITTER_MAX_SECONDS: int(300),
  LOCAL_CACHE_SIZE_IN_BYTES: int(0),
  NEAR_LIMIT_RATIO: float(0.8, 0, 1),
  CACHE_KEY_PREFIX: str(),
  STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: bool(false),
  USE_CALENDAR_MONTH_RATE_LIMIT: bool(false),
  SHADOW_MODE: bool(false),
  QUOTA_MODE: bool(false),
  RESPONSE_DYNAMIC_METADATA: bool(false),
  LIMIT_RESPONSE_HEADERS_ENABLED: bool(false),
  LIMIT_LIMIT_HEADER: str('RateLimit-Limit'),
  LIMIT_REMAINING_HEADER: str('RateLimit-Remaining'),
  LIMIT_RESET_HEADER: str('RateLimit-Reset'),
  LIMIT_PER_UNIT_HEADERS_ENABLED: bool(false),
  LIMIT_REQUEST_HEADERS_ENABLED: bool(false),
  LIMIT_REQUEST_LIMIT_HEADER: str('RateLimit-Limit'),
  LIMIT_REQUEST_REMAINING_HEADER: str('RateLimit-Remaining'),
  LIMIT_REQUEST_RESET_HEADER: str('RateLimit-Reset'),
  LIMIT_RESPONSE_HEADERS_FORMAT: oneOf('legacy', ['legacy', 'ietf']),
});

export function limiterSettings(
  l: Values<typeof LIMITER>,
  problems: SettingsProblem[],
): LimiterSettings {
  if (l.LIMIT_RESPONSE_HEADERS_FORMAT === 'ietf' && l.LIMIT_PER_UNIT_HEADERS_ENABLED) {
    problems.push({
      setting: 'LIMIT_PER_UNIT_HEADERS_ENABLED',
      message:
        'has no meaning with LIMIT_RESPONSE_HEADERS_FORMAT=ietf, whose RateLimit field lists every limit; set it to false',
    });
  }
  return deepFreeze({
    expirationJitterMaxSeconds: l.EXPIRATION_JITTER_MAX_SECONDS,
    localCacheSizeBytes: l.LOCAL_CACHE_SIZE_IN_BYTES,
    nearLimitRatio: l.NEAR_LIMIT_RATIO,
    cacheKeyPrefix: l.CACHE_KEY_PREFIX,
    stopCacheKeyIncrementWhenOverlimit: l.STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT,
    useCalendarMonth: l.USE_CALENDAR_MONTH_RATE_LIMIT,
    globalShadowMode: l.SHADOW_MODE,
    globalQuotaMode: l.QUOTA_MODE,
    responseDynamicMetadata: l.RESPONSE_DYNAMIC_METADATA,
    headersFormat: l.LIMIT_RESPONSE_HEADERS_FORMAT,
    responseHeaders: {
      enabled: l.LIMIT_RESPONSE_HEADERS_ENABLED,
      limit: l.LIMIT_LIMIT_HEADER,
      remaining: l.LIMIT_REMAINING_HEADER,
      reset: l.LIMIT_RESET_HEADER,
      perUnit: l.LIMIT_PER_UNIT_HEADERS_ENABLED,
    },
    requestHeaders: {
      enabled: l.LIMIT_REQUEST_HEADERS_ENABLED,
      limit: l.LIMIT_REQUEST_LIMIT_HEADER,
      remaining: l.LIMIT_REQUEST_REMAINING_HEADER,
      reset: l.LIMIT_REQUEST_RESET_HEADER,
    },
  });
}
