// RateLimitConfig resources: decoded from protobuf into the same documents files produce.
import path from 'node:path';
import protobuf from 'protobufjs';
import {
  ConfigError,
  type ConfigDocument,
  type DescriptorDoc,
  type JsonObject,
  type JsonValue,
  type RateLimitPolicyDoc,
} from '../../config';
import { describeError } from '../../lib/errors';
import { API_DIR } from '../../lib/proto';

export const RATE_LIMIT_CONFIG_TYPE_URL =
  'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig';

/**
 * A protobuf Any as proto-loader decodes it: protobufjs's bundled Any keeps the proto name
 * `type_url` even where every other field is camelCase.
 */
export interface WireAny {
  readonly type_url?: string;
  readonly value?: Buffer | Uint8Array;
}

interface WireStructValue {
  nullValue?: string;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: { fields?: Record<string, WireStructValue> };
  listValue?: { values?: WireStructValue[] };
}

interface WirePolicy {
  unit?: string;
  requestsPerUnit?: number;
  unlimited?: boolean;
  name?: string;
  replaces?: { name?: string }[];
}

interface WireDescriptor {
  key?: string;
  value?: string;
  rateLimit?: WirePolicy;
  descriptors?: WireDescriptor[];
  shadowMode?: boolean;
  detailedMetric?: boolean;
  quotaMode?: boolean;
  metadata?: { fields?: Record<string, WireStructValue> };
  valueToMetric?: boolean;
  shareThreshold?: boolean;
}

interface WireConfig {
  name?: string;
  domain?: string;
  descriptors?: WireDescriptor[];
}

let configType: protobuf.Type | undefined;

/** The RateLimitConfig message type, loaded once from api/. */
function rateLimitConfigType(): protobuf.Type {
  if (configType === undefined) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => {
      const candidate = path.join(API_DIR, target);
      return target.startsWith('google/protobuf/') ? target : candidate;
    };
    root.loadSync('ratelimit/config/ratelimit/v3/rls_conf.proto', { keepCase: false });
    root.resolveAll();
    configType = root.lookupType('ratelimit.config.ratelimit.v3.RateLimitConfig');
  }
  return configType;
}

function jsonOf(value: WireStructValue): JsonValue {
  if (value.structValue !== undefined) return structToJson(value.structValue);
  if (value.listValue !== undefined) return (value.listValue.values ?? []).map(jsonOf);
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.numberValue !== undefined) return value.numberValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return null;
}

function structToJson(struct: { fields?: Record<string, WireStructValue> }): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(struct.fields ?? {})) out[key] = jsonOf(value);
  return out;
}

function policyOf(policy: WirePolicy | undefined): RateLimitPolicyDoc | undefined {
  if (policy === undefined) return undefined;
  return {
    // The enum's name, as the reference hands it to its loader; UNKNOWN reads as no unit.
    unit: policy.unit === undefined ? 'UNKNOWN' : policy.unit,
    requestsPerUnit: policy.requestsPerUnit ?? 0,
    unlimited: policy.unlimited ?? false,
    name: policy.name === undefined || policy.name === '' ? undefined : policy.name,
    replaces: (policy.replaces ?? []).map((r) => r.name ?? ''),
    position: undefined,
  };
}

function descriptorOf(d: WireDescriptor): DescriptorDoc {
  const metadata = d.metadata === undefined ? undefined : structToJson(d.metadata);
  return {
    key: d.key ?? '',
    value: d.value === undefined || d.value === '' ? undefined : d.value,
    rateLimit: policyOf(d.rateLimit),
    descriptors: (d.descriptors ?? []).map(descriptorOf),
    shadowMode: d.shadowMode ?? false,
    quotaMode: d.quotaMode ?? false,
    detailedMetric: d.detailedMetric ?? false,
    valueToMetric: d.valueToMetric ?? false,
    shareThreshold: d.shareThreshold ?? false,
    metadata: metadata === undefined || Object.keys(metadata).length === 0 ? undefined : metadata,
    position: undefined,
  };
}

/**
 * Decodes one resource of a response. The document's source is the resource name (or its
 * position when unnamed), so every refusal names the resource.
 */
export function decodeResource(resource: WireAny, index: number): ConfigDocument | ConfigError {
  const placeholder = `resource #${index + 1}`;
  if (resource.type_url !== RATE_LIMIT_CONFIG_TYPE_URL) {
    return new ConfigError(
      'BAD_RESOURCE',
      placeholder,
      `unexpected resource type ${JSON.stringify(resource.type_url ?? '')}; expected ${RATE_LIMIT_CONFIG_TYPE_URL}`,
    );
  }
  let config: WireConfig;
  try {
    const type = rateLimitConfigType();
    config = type.toObject(type.decode(resource.value ?? new Uint8Array()), {
      longs: Number,
      enums: String,
      defaults: false,
    });
  } catch (err: unknown) {
    return new ConfigError(
      'BAD_RESOURCE',
      placeholder,
      `cannot decode a RateLimitConfig: ${describeError(err)}`,
    );
  }
  const source =
    config.name === undefined || config.name === '' ? placeholder : `resource ${config.name}`;
  return {
    source,
    domain: config.domain ?? '',
    descriptors: (config.descriptors ?? []).map(descriptorOf),
    warnings: [],
  };
}
