// Reading the one request message of a unary call (or of a server-streaming call's request),
// within MAX_REQUEST_BYTES and HEADER_TIMEOUT, and within the buffer budget of unfinished
// requests (GRPC_MAX_BUFFERED_BYTES, GRPC_MAX_BUFFERED_REQUESTS), which its connection keeps.
import { ErrorCode, HeldBytes, type H2Stream } from '../h2';
import type { Logger } from '../../lib/logger';
import type { LastResort } from '../last-resort';
import {
  CallError,
  GrpcStatus,
  messageTooLarge,
  singleMessage,
  uncompressed,
  type FramedMessage,
} from './protocol';
import { answerInternal, failCall } from './replies';
import type { TimeoutQueue, Waiting } from './timeout-queue';

/** A body in the timeout queue: refused when its time is up. */
export interface BodyWait extends Waiting {
  tooSlow(): void;
}

/** What reading a request needs: its limits, and where to report what goes wrong. */
export interface UnaryReading {
  readonly logger: Logger;
  readonly lastResort: LastResort;
  /** MAX_REQUEST_BYTES: one message, before and after decompression. */
  readonly maxRequestBytes: number;
  /** HEADER_TIMEOUT: the whole request must have arrived by then. */
  readonly headerTimeoutMs: number;
  /** The server's queue of bodies still arriving, HEADER_TIMEOUT each (see expireBody). */
  readonly bodyTimeouts: TimeoutQueue<BodyWait>;
}

function bodyTooSlow(reading: UnaryReading): CallError {
  return new CallError(
    GrpcStatus.DEADLINE_EXCEEDED,
    `the request did not arrive in full within HEADER_TIMEOUT (${reading.headerTimeoutMs} ms)`,
  );
}

/** What a method does with its calls' request messages: one object per method, for all calls. */
export interface UnaryReceiver<C> {
  /** The call's one request message, decompressed. */
  message(call: C, message: FramedMessage): void;
  /** The call ended without a message: refused while reading, or its client gone first. */
  unread(call: C): void;
}

/** Where a stream keeps the state of its body being read, for the shared listeners below. */
const READING = Symbol('unary body being read');

type ReadStream = H2Stream & { [READING]?: UnaryRead<unknown> | undefined };

/**
 * One call's body being read. Its listeners are shared functions that find it on the stream,
 * and it is its own entry in the body timeout queue: reading a call allocates this object and
 * nothing else, and it is let go as soon as the body is settled, so a stream still waiting for
 * its backend holds no reading state.
 */
class UnaryRead<C> implements BodyWait {
  dueMs = 0;
  queuedAt = -1;
  /**
   * The body while it is one chunk. A chunk is valid only during its 'data' event (the own
   * HTTP/2 reads plaintext connections into one shared buffer, see h2/stream.ts): it is copied
   * unless the body ends with it, in the same call.
   */
  private first: Buffer | undefined = undefined;
  /** The body once a second chunk came, in memory released when reading ends. */
  private rest: HeldBytes | undefined = undefined;
  private size = 0;

  constructor(
    private readonly stream: ReadStream,
    private readonly encoding: string | undefined,
    private readonly reading: UnaryReading,
    private readonly receiver: UnaryReceiver<C>,
    private readonly call: C,
  ) {}

  data(chunk: Buffer, isLast: boolean): void {
    const { reading } = this;
    this.size += chunk.length;
    if (this.size > reading.maxRequestBytes + 5) {
      this.refuse(messageTooLarge(reading.maxRequestBytes));
      return;
    }
    // A body that ends with this chunk is read at once and holds nothing.
    if (!isLast && !this.stream.keepOnly(this.size)) {
      // Past the buffer budget: the stream was refused with REFUSED_STREAM.
      this.closed();
      return;
    }
    const { first } = this;
    if (first === undefined && this.rest === undefined) {
      this.first = isLast ? chunk : Buffer.from(chunk);
      return;
    }
    if (first !== undefined) {
      this.rest = new HeldBytes(reading.maxRequestBytes + 5);
      this.rest.append(first);
      this.first = undefined;
    }
    // No mapped store to be had: refused as past the budget, for the client to send again.
    if (!(this.rest as HeldBytes).append(chunk)) {
      this.stream.close(ErrorCode.REFUSED_STREAM);
      this.closed();
    }
  }

  end(): void {
    const { first, rest } = this;
    const body = rest !== undefined ? rest.copy() : (first ?? Buffer.alloc(0));
    this.settle();
    this.deliver(body);
  }

  /** The stream closed before its body ended: the client is gone. */
  closed(): void {
    this.settle();
    this.receiver.unread(this.call);
  }

  /** HEADER_TIMEOUT passed with the body still arriving (a settled read left the queue). */
  tooSlow(): void {
    this.refuse(bodyTooSlow(this.reading));
    this.stream.close();
  }

  /** Reading is over: out of the timeout queue, off the stream, its bytes given back. */
  private settle(): void {
    this.stream[READING] = undefined;
    this.reading.bodyTimeouts.remove(this);
    this.stream.keepOnly(0);
    this.first = undefined;
    this.rest?.release();
    this.rest = undefined;
  }

  private refuse(err: CallError): void {
    this.settle();
    this.receiver.unread(this.call);
    failCall(this.stream, err, this.reading);
  }

  private deliver(body: Buffer): void {
    const { reading, stream } = this;
    let message: FramedMessage;
    try {
      message = uncompressed(
        singleMessage(body, reading.maxRequestBytes),
        this.encoding,
        reading.maxRequestBytes,
      );
    } catch (err: unknown) {
      this.receiver.unread(this.call);
      failCall(stream, err, reading);
      return;
    }
    try {
      this.receiver.message(this.call, message);
    } catch (err: unknown) {
      answerInternal(stream, err, reading.lastResort, 'gRPC call');
    }
  }
}

function onData(this: ReadStream, chunk: Buffer, isLast?: boolean): void {
  this[READING]?.data(chunk, isLast === true);
}

function onEnd(this: ReadStream): void {
  this[READING]?.end();
}

function onClose(this: ReadStream): void {
  this[READING]?.closed();
}

/** The body timeout queue's action: what is still being read when its time is up is refused. */
export function expireBody(read: BodyWait): void {
  read.tooSlow();
}

/**
 * Reads the one request message of a call, decompressed, within the limits, and hands it to
 * `receiver.message`; a body that is not exactly one message ends the call with the protocol's
 * status. An exception the receiver throws is the last resort's: logged, counted, the call
 * answered INTERNAL. `receiver.unread` runs instead when the call ends without a message.
 */
export function readUnary<C>(
  stream: H2Stream,
  encoding: string | undefined,
  reading: UnaryReading,
  receiver: UnaryReceiver<C>,
  call: C,
): void {
  const read = new UnaryRead(stream, encoding, reading, receiver, call);
  (stream as ReadStream)[READING] = read;
  reading.bodyTimeouts.add(read);
  stream.on('data', onData);
  stream.on('end', onEnd);
  stream.on('close', onClose);
}
