// A stream's receiving half as the connection's reader side keeps it: the client's
// END_STREAM, the stream's receive window, and the body bytes against content-length.

/** What went wrong with a DATA frame on the stream, if anything. */
export type IncomingFault = 'flow' | 'length' | undefined;

export class IncomingState {
  private isEnded = false;
  private window: number;
  private uncredited = 0;
  private received = 0;

  /**
   * @param window the receive window this side advertised for new streams.
   * @param expectedBytes the request's content-length, when it declared one.
   */
  constructor(
    window: number,
    private readonly expectedBytes: number | undefined,
  ) {
    this.window = window;
  }

  /** The client sent END_STREAM (on HEADERS, DATA or trailers). */
  get remoteEnded(): boolean {
    return this.isEnded;
  }

  /** Body bytes received so far. */
  get bodyBytes(): number {
    return this.received;
  }

  /** A DATA frame of `length` bytes (padding included) carrying `dataBytes` of body. */
  receive(length: number, dataBytes: number): IncomingFault {
    this.window -= length;
    if (this.window < 0) return 'flow';
    this.uncredited += length;
    this.received += dataBytes;
    if (this.expectedBytes !== undefined && this.received > this.expectedBytes) return 'length';
    return undefined;
  }

  /** The window to give back once `threshold` bytes arrived unacknowledged; 0 before that. */
  creditDue(threshold: number): number {
    if (this.uncredited < threshold) return 0;
    const credit = this.uncredited;
    this.window += credit;
    this.uncredited = 0;
    return credit;
  }

  /** END_STREAM arrived; false when the body disagrees with content-length (section 8.1.1). */
  end(): boolean {
    this.isEnded = true;
    return this.expectedBytes === undefined || this.received === this.expectedBytes;
  }
}
