// One socket to one memcached server (TCP or TLS): pipelined binary-protocol requests, each
// answered or failed within the timeout, and a fresh socket for the next request after a failure.
import net from 'node:net';
import tls from 'node:tls';
import { OPAQUE_OFFSET, parseResponse, type MemcachedResponse } from './binary-protocol';

/** Where a connection goes and how long a request may wait for its answer. */
export interface ConnectionTarget {
  readonly host: string;
  readonly port: number;
  /** TLS options; undefined connects in plain TCP. */
  readonly tls: tls.ConnectionOptions | undefined;
  /** Connecting plus answering, per request. */
  readonly timeoutMs: number;
}

/**
 * What failed: the connection (refused, reset, closed: the server is unreachable), the wait for
 * an answer, the answers' order, or this client, closed at shutdown.
 */
export type IoFailure = 'connection' | 'timeout' | 'out-of-step' | 'closed';

/** A failure of the connection itself (refused, reset, timed out), not a server reply. */
export class MemcachedIoError extends Error {
  constructor(
    message: string,
    readonly failure: IoFailure,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MemcachedIoError';
  }
}

interface Pending {
  readonly opaque: number;
  /** On the monotonic clock (performance.now()): wall-clock jumps do not move deadlines. */
  readonly deadlineMs: number;
  readonly onResponse: (response: MemcachedResponse) => void;
  readonly onError: (err: Error) => void;
}

/** Told when a connection starts or stops working, for the store's connection state. */
export interface ConnectionEvents {
  onUp(): void;
  onDown(err: Error): void;
}

/**
 * Requests are answered in the order they were written (no quiet commands are used), so the
 * pending list is a queue and the head always holds the earliest deadline: one timer suffices.
 */
export class MemcachedConnection {
  private socket: net.Socket | undefined;
  private received: Buffer = Buffer.alloc(0);
  private pending: Pending[] = [];
  private nextOpaque = 1;
  private timer: NodeJS.Timeout | undefined;
  private isClosed = false;

  constructor(
    private readonly target: ConnectionTarget,
    private readonly events: ConnectionEvents,
  ) {}

  /** Requests written and not yet answered. */
  get inFlight(): number {
    return this.pending.length;
  }

  /**
   * Writes one request (its opaque field is overwritten) and calls exactly one of the two
   * callbacks: the response, or a MemcachedIoError within the timeout.
   */
  send(
    request: Buffer,
    onResponse: (response: MemcachedResponse) => void,
    onError: (err: Error) => void,
  ): void {
    if (this.isClosed) {
      onError(new MemcachedIoError('the memcached client is closed', 'closed'));
      return;
    }
    const socket = this.socket ?? this.open();
    const opaque = this.nextOpaque;
    this.nextOpaque = opaque >= 0xffffffff ? 1 : opaque + 1;
    request.writeUInt32BE(opaque, OPAQUE_OFFSET);
    this.pending.push({
      opaque,
      deadlineMs: performance.now() + this.target.timeoutMs,
      onResponse,
      onError,
    });
    socket.write(request);
    if (this.timer === undefined) this.armTimer(this.target.timeoutMs);
  }

  private open(): net.Socket {
    const { host, port } = this.target;
    const socket =
      this.target.tls === undefined
        ? net.connect({ host, port, noDelay: true })
        : tls.connect({
            host,
            port,
            // SNI carries names only; for an address the certificate's IP entries are checked.
            ...(net.isIP(host) === 0 ? { servername: host } : {}),
            ...this.target.tls,
          });
    this.socket = socket;
    this.received = Buffer.alloc(0);
    socket.setNoDelay(true);
    socket.once(this.target.tls === undefined ? 'connect' : 'secureConnect', () => {
      if (this.socket === socket) this.events.onUp();
    });
    socket.on('data', (data: Buffer) => {
      if (this.socket === socket) this.receive(data);
    });
    socket.on('error', (err: Error) => {
      this.fail(socket, new MemcachedIoError(err.message, 'connection', { cause: err }));
    });
    socket.on('close', () => {
      this.fail(socket, new MemcachedIoError('connection closed', 'connection'));
    });
    return socket;
  }

  private receive(data: Buffer): void {
    let buffer = this.received.length === 0 ? data : Buffer.concat([this.received, data]);
    for (;;) {
      let parsed: ReturnType<typeof parseResponse>;
      try {
        parsed = parseResponse(buffer);
      } catch (err: unknown) {
        this.outOfStep(err instanceof Error ? err.message : String(err));
        return;
      }
      if (parsed === undefined) break;
      buffer = buffer.subarray(parsed.bytes);
      const head = this.pending[0];
      if (head?.opaque !== parsed.response.opaque) {
        this.outOfStep('an answer did not match its request');
        return;
      }
      this.pending.shift();
      head.onResponse(parsed.response);
    }
    this.received = buffer;
  }

  /** Answers out of step with the requests: nothing after this point can be trusted. */
  private outOfStep(reason: string): void {
    this.received = Buffer.alloc(0);
    if (this.socket !== undefined)
      this.fail(this.socket, new MemcachedIoError(reason, 'out-of-step'));
  }

  private armTimer(delayMs: number): void {
    this.timer = setTimeout(this.checkDeadline, Math.max(1, delayMs));
    this.timer.unref();
  }

  private readonly checkDeadline = (): void => {
    this.timer = undefined;
    const head = this.pending[0];
    if (head === undefined) return;
    const left = head.deadlineMs - performance.now();
    if (left > 0) {
      this.armTimer(left);
      return;
    }
    if (this.socket !== undefined) {
      this.fail(
        this.socket,
        new MemcachedIoError(`no answer within ${this.target.timeoutMs} ms`, 'timeout'),
      );
    }
  };

  /** Drops `socket` if it is still the current one and fails everything written to it. */
  private fail(socket: net.Socket, err: MemcachedIoError): void {
    if (this.socket !== socket) return;
    this.socket = undefined;
    this.received = Buffer.alloc(0);
    socket.destroy();
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const failed = this.pending;
    this.pending = [];
    for (const p of failed) p.onError(err);
    if (!this.isClosed) this.events.onDown(err);
  }

  /** Fails what is still pending and closes the socket. */
  close(): void {
    this.isClosed = true;
    if (this.socket !== undefined) {
      this.fail(this.socket, new MemcachedIoError('the memcached client is closed', 'closed'));
    }
  }
}
