// RateLimitConfig resources: decoded from protobuf into the same documents files produce.
import {
  ConfigError,
  MAX_DESCRIPTOR_DEPTH,
  type ConfigDocument,
  type DescriptorDoc,
  type RateLimitPolicyDoc,
} from '../../config';
import type protobuf from 'protobufjs';
import { describeError } from '../../lib/errors';
import { messageType, QUOTA_RULES, RATE_LIMIT_CONFIG } from '../../lib/proto';
import { fromStruct, type StructMessage } from '../../lib/struct';
import { quotaRulesOf, type WireQuotaBucket } from './quota-resource';

export const RATE_LIMIT_CONFIG_TYPE_URL = RATE_LIMIT_CONFIG.typeUrl;

/**
 * A protobuf Any as proto-loader decodes it: protobufjs's bundled Any keeps the proto name
 * `type_url` even where every other field is camelCase.
 */
export interface WireAny {
  readonly type_url?: string;
  readonly value?: Buffer | Uint8Array;
}

interface WirePolicy {
  unit?: string;
  requestsPerUnit?: number;
  unlimited?: boolean;
  name?: string;
  replaces?: { name?: string }[];
  algorithm?: string;
  burst?: number;
}

interface WireDescriptor {
  key?: string;
  value?: string;
  rateLimit?: WirePolicy;
  descriptors?: WireDescriptor[];
  shadowMode?: boolean;
  detailedMetric?: boolean;
  quotaMode?: boolean;
  metadata?: StructMessage;
  valueToMetric?: boolean;
  shareThreshold?: boolean;
  rateLimits?: WirePolicy[];
}

interface WireConfig {
  name?: string;
  domain?: string;
  descriptors?: WireDescriptor[];
  quotaBuckets?: WireQuotaBucket[];
}

function policyOf(policy: WirePolicy | undefined): RateLimitPolicyDoc | undefined {
  if (policy === undefined) return undefined;
  return limitOf(policy);
}

/** One limit; the extension's enum names are the file format's words in capitals. */
function limitOf(policy: WirePolicy): RateLimitPolicyDoc {
  return {
    // The enum's name, as the reference hands it to its loader; UNKNOWN reads as no unit.
    unit: policy.unit === undefined ? 'UNKNOWN' : policy.unit,
    requestsPerUnit: policy.requestsPerUnit ?? 0,
    unlimited: policy.unlimited ?? false,
    name: policy.name === undefined || policy.name === '' ? undefined : policy.name,
    replaces: (policy.replaces ?? []).map((r) => r.name ?? ''),
    algorithm: policy.algorithm?.toLowerCase(),
    burst: policy.burst === undefined || policy.burst === 0 ? undefined : policy.burst,
    position: undefined,
  };
}

/** Past MAX_DESCRIPTOR_DEPTH compile() refuses the tree; deeper levels are not even copied. */
function descriptorOf(d: WireDescriptor, depth = 0): DescriptorDoc {
  const metadata = d.metadata === undefined ? undefined : fromStruct(d.metadata);
  return {
    key: d.key ?? '',
    value: d.value === undefined || d.value === '' ? undefined : d.value,
    rateLimit: policyOf(d.rateLimit),
    rateLimits: (d.rateLimits ?? []).map(limitOf),
    descriptors:
      depth > MAX_DESCRIPTOR_DEPTH
        ? []
        : (d.descriptors ?? []).map((child) => descriptorOf(child, depth + 1)),
    shadowMode: d.shadowMode ?? false,
    quotaMode: d.quotaMode ?? false,
    detailedMetric: d.detailedMetric ?? false,
    valueToMetric: d.valueToMetric ?? false,
    shareThreshold: d.shareThreshold ?? false,
    metadata: metadata === undefined || Object.keys(metadata).length === 0 ? undefined : metadata,
    position: undefined,
  };
}

/** The warning of every load that reads quota rules from RateLimitConfig's field 1000. */
export function deprecatedQuotaBuckets(source: string): string {
  return `${source}: quota_buckets in a RateLimitConfig is deprecated and will not be read after this release; serve the rules as a ${QUOTA_RULES.name} resource (docs/rlqs.md)`;
}

/**
 * One resource's bytes as the message `kind` names, in proto-loader's object form; a resource
 * that does not decode is refused as BAD_RESOURCE under `placeholder`.
 */
export function decodeWire(
  kind: { readonly file: string; readonly name: string },
  resource: WireAny,
  placeholder: string,
): ReturnType<protobuf.Type['toObject']> | ConfigError {
  try {
    const type = messageType(kind.file, kind.name);
    return type.toObject(type.decode(resource.value ?? new Uint8Array()), {
      longs: Number,
      enums: String,
      defaults: false,
    });
  } catch (err: unknown) {
    const what = kind.name.slice(kind.name.lastIndexOf('.') + 1);
    return new ConfigError(
      'BAD_RESOURCE',
      placeholder,
      `cannot decode a ${what}: ${describeError(err)}`,
    );
  }
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
  const decoded = decodeWire(RATE_LIMIT_CONFIG, resource, placeholder);
  if (decoded instanceof ConfigError) return decoded;
  const config: WireConfig = decoded;
  const source =
    config.name === undefined || config.name === '' ? placeholder : `resource ${config.name}`;
  const domain = config.domain ?? '';
  const wireRules = config.quotaBuckets ?? [];
  const quotaBuckets = wireRules.length === 0 ? [] : quotaRulesOf(wireRules, { domain, source });
  if (quotaBuckets instanceof ConfigError) return quotaBuckets;
  return {
    source,
    domain,
    descriptors: (config.descriptors ?? []).map((d) => descriptorOf(d)),
    warnings: quotaBuckets.length === 0 ? [] : [deprecatedQuotaBuckets(source)],
    // Left out without rules, as a file without quota_buckets leaves it out.
    ...(quotaBuckets.length === 0 ? {} : { quotaBuckets }),
  };
}
