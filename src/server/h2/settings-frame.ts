// SETTINGS frames (RFC 9113 section 6.5): the one this side sends, and the checks a client's
// must pass before its entries are applied.
import { ConnectionError, ErrorCode, Flag, Setting } from './frames';
import { MAX_SETTINGS_ENTRIES } from './limits';

/**
 * Checks a client's SETTINGS frame: true for an acknowledgement, false for entries to apply,
 * six bytes each (a 16-bit id, a 32-bit value); a frame that breaks a rule throws.
 */
export function isSettingsAck(flags: number, stream: number, payload: Buffer): boolean {
  if (stream !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS on a stream');
  if ((flags & Flag.ACK) !== 0) {
    if (payload.length !== 0) {
      throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'a SETTINGS ACK with a payload');
    }
    return true;
  }
  if (payload.length % 6 !== 0) {
    throw new ConnectionError(
      ErrorCode.FRAME_SIZE_ERROR,
      'SETTINGS of a length not a multiple of 6',
    );
  }
  if (payload.length > 6 * MAX_SETTINGS_ENTRIES) {
    throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, 'SETTINGS with too many entries');
  }
  return false;
}

/** This side's SETTINGS: six bytes per setting, a 16-bit id and a 32-bit value. */
export function settingsPayload(options: {
  readonly maxConcurrentStreams: number;
  readonly maxHeaderListBytes: number;
}): Buffer {
  const payload = Buffer.alloc(12);
  payload.writeUInt16BE(Setting.MAX_CONCURRENT_STREAMS, 0);
  payload.writeUInt32BE(options.maxConcurrentStreams, 2);
  payload.writeUInt16BE(Setting.MAX_HEADER_LIST_SIZE, 6);
  payload.writeUInt32BE(options.maxHeaderListBytes, 8);
  return payload;
}
