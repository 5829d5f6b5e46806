// RLQS messages to and from protobuf bytes, through protobufjs and the api/ protos: a report
// arrives once per reporting interval per Envoy, so this is not a path that needs a hand codec.
import type protobuf from 'protobufjs';
import { messageType } from '../lib/proto';
import type { AssignedStrategy, BucketAction } from './messages';
import type { WireDuration, WireUsageReports } from './validate';

/** The RLQS protocol's file in api/. */
export const RLQS_PROTO = 'envoy/service/rate_limit_quota/v3/rlqs.proto';
const PACKAGE = 'envoy.service.rate_limit_quota.v3';

/** The full method name the Envoy filter calls. */
export const STREAM_RATE_LIMIT_QUOTAS = `/${PACKAGE}.RateLimitQuotaService/StreamRateLimitQuotas`;

const reportsType = (): protobuf.Type =>
  messageType(RLQS_PROTO, `${PACKAGE}.RateLimitQuotaUsageReports`);
const responseType = (): protobuf.Type =>
  messageType(RLQS_PROTO, `${PACKAGE}.RateLimitQuotaResponse`);

/** Bytes that are not a RateLimitQuotaUsageReports message. */
export class UndecodableReport extends Error {
  constructor(cause: unknown) {
    super('the message is not a RateLimitQuotaUsageReports', { cause });
    this.name = 'UndecodableReport';
  }
}

/** Decodes one report; throws UndecodableReport for bytes that do not parse. */
export function decodeReports(bytes: Uint8Array): WireUsageReports {
  const type = reportsType();
  let message: protobuf.Message;
  try {
    message = type.decode(bytes);
  } catch (err: unknown) {
    throw new UndecodableReport(err);
  }
  const plain: WireUsageReports = type.toObject(message, { longs: Number, defaults: false });
  return plain;
}

function duration(ms: number): WireDuration {
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: Math.round((ms - seconds * 1000) * 1e6) };
}

function strategyMessage(strategy: AssignedStrategy): Record<string, unknown> {
  switch (strategy.kind) {
    case 'blanket':
      return { blanketRule: strategy.rule };
    case 'token_bucket':
      return {
        tokenBucket: {
          maxTokens: strategy.maxTokens,
          tokensPerFill: { value: strategy.tokensPerFill },
          fillInterval: { seconds: strategy.fillSeconds, nanos: strategy.fillNanos },
        },
      };
  }
}

function actionMessage(action: BucketAction): Record<string, unknown> {
  const bucketId = { bucket: Object.fromEntries(action.bucket) };
  if (action.kind === 'abandon') return { bucketId, abandonAction: {} };
  return {
    bucketId,
    quotaAssignmentAction: {
      assignmentTimeToLive: duration(action.ttlMs),
      rateLimitStrategy: strategyMessage(action.strategy),
    },
  };
}

/** Encodes one RateLimitQuotaResponse carrying `actions` in order. */
export function encodeResponse(actions: readonly BucketAction[]): Uint8Array {
  const type = responseType();
  return type.encode(type.fromObject({ bucketAction: actions.map(actionMessage) })).finish();
}
