// grpc.health.v1 messages: HealthCheckRequest { string service = 1; } and
// HealthCheckResponse { ServingStatus status = 1; }, small enough to code by hand.
import { MalformedMessage, ProtoReader, ProtoWriter, WIRE_BYTES } from '../wire/protobuf';
import type { FramedMessage } from './protocol';

export type ServingStatus = 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

const STATUS_NUMBERS: Readonly<Record<ServingStatus, number>> = {
  SERVING: 1,
  NOT_SERVING: 2,
  SERVICE_UNKNOWN: 3,
};

/** The service a health request asks about; undefined when the bytes are not one. */
export function decodeHealthRequest(message: FramedMessage): string | undefined {
  const r = new ProtoReader(message.buf, message.start, message.end);
  let service = '';
  try {
    while (!r.isDone) {
      const tag = r.varint();
      if (tag === (1 << 3) + WIRE_BYTES) service = r.string();
      else r.skipField(tag);
    }
  } catch (err: unknown) {
    if (err instanceof MalformedMessage) return undefined;
    throw err;
  }
  return service;
}

/** A framed HealthCheckResponse. */
export function encodeHealthResponse(status: ServingStatus): Buffer {
  const w = new ProtoWriter(5);
  w.varint(1, STATUS_NUMBERS[status]);
  const length = w.length;
  const out = w.finish();
  out[0] = 0;
  out.writeUInt32BE(length, 1);
  return out;
}
