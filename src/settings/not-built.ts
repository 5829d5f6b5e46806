// Settings that turn on a capability this version does not have yet: refused, never ignored.
import type { RawSettings } from './schema';

export interface NotBuilt {
  /** The setting whose value asks for the capability. */
  readonly setting: string;
  /** The offending value when the capability is asked for, otherwise undefined. */
  readonly asked: (raw: RawSettings) => string | undefined;
  readonly capability: string;
}

// Redis settings ask for nothing while another backend is chosen (the reference ignores them too).
const redisChosen = (raw: RawSettings): boolean => raw.limiter.BACKEND_TYPE === 'redis';

const whenTrue =
  (pick: (raw: RawSettings) => boolean) =>
  (raw: RawSettings): string | undefined =>
    pick(raw) ? 'true' : undefined;

/**
 * One row per capability not built yet. Landing a capability removes its row; the
 * settings are parsed and validated either way.
 */
export const NOT_BUILT: readonly NotBuilt[] = [
  {
    setting: 'REDIS_TYPE',
    asked: (raw) => (!redisChosen(raw) || raw.redis.TYPE === 'single' ? undefined : raw.redis.TYPE),
    capability: 'Redis sentinel and cluster modes',
  },
  {
    setting: 'REDIS_PERSECOND_TYPE',
    asked: (raw) =>
      redisChosen(raw) && raw.redisCommon.PERSECOND && raw.redisPerSecond.TYPE !== 'single'
        ? raw.redisPerSecond.TYPE
        : undefined,
    capability: 'Redis sentinel and cluster modes',
  },
  {
    setting: 'REDIS_TLS',
    asked: whenTrue((raw) => redisChosen(raw) && raw.redis.TLS),
    capability: 'TLS to Redis',
  },
  {
    setting: 'REDIS_PERSECOND_TLS',
    asked: whenTrue(
      (raw) => redisChosen(raw) && raw.redisCommon.PERSECOND && raw.redisPerSecond.TLS,
    ),
    capability: 'TLS to Redis',
  },
  {
    setting: 'REDIS_AWS_IAM_AUTH',
    asked: whenTrue((raw) => redisChosen(raw) && raw.redis.AWS_IAM_AUTH),
    capability: 'cloud identity (AWS IAM) authentication to Redis',
  },
  {
    setting: 'REDIS_PERSECOND_AWS_IAM_AUTH',
    asked: whenTrue(
      (raw) => redisChosen(raw) && raw.redisCommon.PERSECOND && raw.redisPerSecond.AWS_IAM_AUTH,
    ),
    capability: 'cloud identity (AWS IAM) authentication to Redis',
  },
  {
    setting: 'GRPC_SERVER_USE_TLS',
    asked: whenTrue((raw) => raw.server.GRPC_SERVER_USE_TLS),
    capability: 'TLS on the gRPC listener',
  },
  {
    setting: 'TRACING_ENABLED',
    asked: whenTrue((raw) => raw.tracing.TRACING_ENABLED),
    capability: 'OTLP tracing',
  },
];
