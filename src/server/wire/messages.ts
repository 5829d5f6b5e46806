// Plain-object shapes of the protobuf messages as @grpc/proto-loader decodes and encodes them.

/** google.protobuf.Value as protobufjs represents it. */
export interface StructValue {
  nullValue?: 'NULL_VALUE';
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: StructMessage;
  listValue?: { values: StructValue[] };
}

export interface StructMessage {
  fields: Record<string, StructValue>;
}

export interface WireEntry {
  key?: string | null;
  value?: string | null;
}

export interface WireLimitOverride {
  requestsPerUnit?: number | null;
  unit?: string | number | null;
}

export interface WireDescriptor {
  entries?: WireEntry[] | null;
  limit?: WireLimitOverride | null;
  hitsAddend?: { value?: number | string | null } | null;
  isNegativeHits?: boolean | null;
}

export interface WireRequest {
  domain?: string | null;
  descriptors?: WireDescriptor[] | null;
  hitsAddend?: number | null;
}

export interface WireDescriptorStatus {
  code: string;
  currentLimit?: { requestsPerUnit: number; unit: string; name?: string | undefined };
  limitRemaining?: number;
  /** Decoded without defaults, a zero Duration has no seconds. */
  durationUntilReset?: { seconds?: number };
}

export interface WireResponse {
  overallCode: string;
  statuses: WireDescriptorStatus[];
  responseHeadersToAdd: { key: string; value: string }[];
  requestHeadersToAdd: { key: string; value: string }[];
  dynamicMetadata?: StructMessage;
}
