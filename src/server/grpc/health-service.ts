// grpc.health.v1.Health: Check answers once, Watch streams every change of the service's health.
import { ignore } from '../../lib/ignore';
import type { H2Session, H2Stream } from '../h2';
import { STAT, type StatsStore } from '../../stats';
import type { HealthState } from '../health';
import { decodeHealthRequest, encodeHealthResponse, type ServingStatus } from './health-codec';
import { GrpcStatus, type FramedMessage } from './protocol';
import { openResponse, sendMessage, sendStatus } from './replies';
import type { MethodHandler } from './router';
import { readUnary, type UnaryReading, type UnaryReceiver } from './unary';

export const HEALTH_CHECK = '/grpc.health.v1.Health/Check';
export const HEALTH_WATCH = '/grpc.health.v1.Health/Watch';

/** The service names the health service answers for; "" is the whole server. */
const HEALTH_SERVICES = new Set(['', 'ratelimit', 'envoy.service.ratelimit.v3.RateLimitService']);

export interface HealthServiceOptions {
  readonly health: HealthState;
  readonly stats: StatsStore;
  readonly reading: UnaryReading;
}

/** A Check call: its stream, and when it began (its response time is recorded). */
interface CheckCall {
  readonly stream: H2Stream;
  readonly started: bigint;
}

/** The health service and its open Watch streams. */
export class GrpcHealthService {
  private readonly watchers = new Map<H2Stream, string>();
  private isClosed = false;

  constructor(private readonly options: HealthServiceOptions) {
    options.health.onChange(() => {
      for (const [stream, service] of this.watchers) this.writeHealth(stream, service);
    });
  }

  /** The Check handler; the reference counts and times it under the method's name too. */
  check(): MethodHandler {
    const requests = this.options.stats.counter(STAT.totalRequests('Check'));
    const time = this.options.stats.timer(STAT.responseTime('Check'));
    const receiver: UnaryReceiver<CheckCall> = {
      message: (call, message) => {
        this.answerCheck(call.stream, message);
        time.record(Number(process.hrtime.bigint() - call.started) / 1e6);
      },
      // A health call that ends unread holds nothing to give back.
      unread: ignore,
    };
    return (stream, _headers, encoding) => {
      requests.inc();
      readUnary(stream, encoding, this.options.reading, receiver, {
        stream,
        started: process.hrtime.bigint(),
      });
    };
  }

  /** The Watch handler: the current status at once, then one message per change. */
  watch(): MethodHandler {
    const receiver: UnaryReceiver<H2Stream> = {
      message: (stream, message) => {
        this.startWatch(stream, message);
      },
      // A health call that ends unread holds nothing to give back.
      unread: ignore,
    };
    return (stream, _headers, encoding) => {
      readUnary(stream, encoding, this.options.reading, receiver, stream);
    };
  }

  /** Ends the Watch streams of a connection that is closing. */
  endWatchesOf(session: H2Session): void {
    for (const [stream] of this.watchers) {
      if (stream.session === session) this.endWatch(stream);
    }
  }

  /** Ends every Watch stream and refuses new ones: the server is shutting down. */
  close(): void {
    this.isClosed = true;
    for (const [stream] of this.watchers) this.endWatch(stream);
  }

  private statusOf(service: string): ServingStatus {
    if (!HEALTH_SERVICES.has(service)) return 'SERVICE_UNKNOWN';
    return this.options.health.isHealthy() ? 'SERVING' : 'NOT_SERVING';
  }

  private answerCheck(stream: H2Stream, message: FramedMessage): void {
    const service = decodeHealthRequest(message);
    if (service === undefined) {
      sendStatus(stream, GrpcStatus.INTERNAL, 'the request is not a HealthCheckRequest');
      return;
    }
    if (!HEALTH_SERVICES.has(service)) {
      sendStatus(stream, GrpcStatus.NOT_FOUND, `unknown service ${service}`);
      return;
    }
    sendMessage(stream, encodeHealthResponse(this.statusOf(service)));
  }

  private startWatch(stream: H2Stream, message: FramedMessage): void {
    const service = decodeHealthRequest(message);
    if (service === undefined) {
      sendStatus(stream, GrpcStatus.INTERNAL, 'the request is not a HealthCheckRequest');
      return;
    }
    if (this.isClosed || stream.destroyed || stream.closed) return;
    openResponse(stream);
    this.watchers.set(stream, service);
    stream.once('close', () => this.watchers.delete(stream));
    this.writeHealth(stream, service);
  }

  private writeHealth(stream: H2Stream, service: string): void {
    if (!stream.destroyed && !stream.closed)
      stream.write(encodeHealthResponse(this.statusOf(service)));
  }

  private endWatch(stream: H2Stream): void {
    this.watchers.delete(stream);
    if (!stream.destroyed && !stream.closed) stream.end();
  }
}
