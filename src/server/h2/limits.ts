// What one connection may do before it is cut with ENHANCE_YOUR_CALM: the same guards node:http2
// (nghttp2) applies by default, against floods that cost the server without asking anything.
import { ConnectionError, ErrorCode } from './frames';

/** RST_STREAM from the client: a burst of 1,000, then 33 a second (nghttp2's defaults). */
const RESET_BURST = 1000;
const RESETS_PER_SECOND = 33;
/** Streams refused for exceeding SETTINGS_MAX_CONCURRENT_STREAMS (maxSessionRejectedStreams). */
const MAX_REFUSED_STREAMS = 100;
/** Frames that carry nothing: empty DATA, stream errors (maxSessionInvalidFrames). */
const MAX_INVALID_FRAMES = 1000;

function calm(message: string): ConnectionError {
  return new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, message);
}

export class ConnectionLimits {
  private resetTokens = RESET_BURST;
  private resetRefilledAt = performance.now();
  private refused = 0;
  private invalid = 0;

  /** A stream the client reset. */
  reset(): void {
    const now = performance.now();
    const refill = ((now - this.resetRefilledAt) / 1000) * RESETS_PER_SECOND;
    this.resetTokens = Math.min(RESET_BURST, this.resetTokens + refill);
    this.resetRefilledAt = now;
    if (this.resetTokens < 1) throw calm('the client resets streams faster than allowed');
    this.resetTokens -= 1;
  }

  /** A stream refused with REFUSED_STREAM. */
  refusedStream(): void {
    if (++this.refused > MAX_REFUSED_STREAMS) {
      throw calm('the client keeps opening streams beyond SETTINGS_MAX_CONCURRENT_STREAMS');
    }
  }

  /** A frame that did nothing, or broke a stream. */
  invalidFrame(): void {
    if (++this.invalid > MAX_INVALID_FRAMES)
      throw calm('the client sends too many empty or invalid frames');
  }
}
