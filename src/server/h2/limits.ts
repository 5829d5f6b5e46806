// What one connection may do before it is cut with ENHANCE_YOUR_CALM: the same guards node:http2
// (nghttp2) applies by default, against floods that cost the server without asking anything;
// and what frames that move many streams at once count against the connection's turn.
import { ConnectionError, ErrorCode } from './frames';

/** RST_STREAM from the client: a burst of 1,000, then 33 a second (nghttp2's defaults). */
const RESET_BURST = 1000;
const RESETS_PER_SECOND = 33;
/** Streams refused for exceeding SETTINGS_MAX_CONCURRENT_STREAMS (maxSessionRejectedStreams). */
const MAX_REFUSED_STREAMS = 100;
/** Frames that carry nothing: empty DATA, stream errors (maxSessionInvalidFrames). */
const MAX_INVALID_FRAMES = 1000;
/**
 * Header blocks past SETTINGS_MAX_HEADER_LIST_SIZE: the first is answered 431, so that a client
 * that sent one too large keeps its other calls; the second cuts the connection. Each costs an
 * HPACK decode of up to twice the limit (the table must stay in step), the most expensive thing
 * a client can make this server do per byte.
 */
const MAX_OVERSIZED_BLOCKS = 1;
/**
 * PING and SETTINGS acknowledgements waiting for a client that does not read them (nghttp2's
 * max_outbound_ack).
 */
export const MAX_QUEUED_ACKS = 1000;
/** Entries in one SETTINGS frame (nghttp2's max_settings). */
export const MAX_SETTINGS_ENTRIES = 32;
/** CONTINUATION frames in one header block (nghttp2's max_continuations). */
export const MAX_CONTINUATIONS = 8;
/**
 * What visiting one stream counts for against the connection's turn budget (reader.ts), for
 * frames that move many streams at once: a thousand streams cost about what a turn's 64 KiB of
 * frames do to read, so such a frame waits for a turn of its own.
 */
const WALK_BYTES = 64;

function calm(message: string): ConnectionError {
  return new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, message);
}

/** A token bucket: `burst` at first, refilled at `perSecond`. */
class Bucket {
  private tokens: number;
  private refilledAt = performance.now();

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
  ) {
    this.tokens = burst;
  }

  /** Takes `count` tokens; false when there are not that many. */
  take(count: number): boolean {
    const now = performance.now();
    this.tokens = Math.min(
      this.burst,
      this.tokens + ((now - this.refilledAt) / 1000) * this.perSecond,
    );
    this.refilledAt = now;
    if (this.tokens < count) return false;
    this.tokens -= count;
    return true;
  }
}

export class ConnectionLimits {
  private readonly resets = new Bucket(RESET_BURST, RESETS_PER_SECOND);
  private refused = 0;
  private invalid = 0;
  private oversized = 0;
  private acks = 0;

  /** @param work counts work other than reading frames against the connection's turn. */
  constructor(private readonly work: (bytes: number) => void) {}

  /** A stream the client reset. */
  reset(): void {
    if (!this.resets.take(1)) throw calm('the client resets streams faster than allowed');
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

  /** A header block past SETTINGS_MAX_HEADER_LIST_SIZE. */
  oversizedBlock(): void {
    if (++this.oversized > MAX_OVERSIZED_BLOCKS)
      throw calm('the client keeps sending header blocks past the list limit');
  }

  /** `count` streams visited for one frame (a new initial window, say). */
  walked(count: number): void {
    this.work(count * WALK_BYTES);
  }

  /** A PING or SETTINGS acknowledgement written while the client has not read earlier ones. */
  ackQueued(): void {
    if (++this.acks > MAX_QUEUED_ACKS)
      throw calm('the client does not read its PING or SETTINGS acknowledgements');
  }

  /** The socket took everything written: no acknowledgement waits any more. */
  acksDelivered(): void {
    this.acks = 0;
  }
}
