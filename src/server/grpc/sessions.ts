// The server's HTTP/2 connections: tracked for shutdown, aged out after MAX_CONNECTION_AGE,
// cut when they send no preface within HEADER_TIMEOUT, closed after IDLE_TIMEOUT without calls;
// unfinished requests on all of them share one buffer budget (GRPC_MAX_BUFFERED_BYTES and
// GRPC_MAX_BUFFERED_REQUESTS), a thirty-second of it per connection.
import { ignore } from '../../lib/ignore';
import {
  BufferBudget,
  type BudgetRefusal,
  type H2Connection,
  type H2Session,
  type H2Stream,
} from '../h2';
import type net from 'node:net';
import { MAX_TIMER_MS } from './timeout-queue';

export interface SessionTimes {
  /** 0 or above MAX_TIMER_MS: connections live as long as their peer wants. */
  readonly maxConnectionAgeMs: number;
  /** How long calls in flight may finish after the GOAWAY of an aged-out connection. */
  readonly maxConnectionAgeGraceMs: number;
  /** A new connection must send its preface and settings within this (HEADER_TIMEOUT). */
  readonly headerTimeoutMs: number;
  /** A connection with no call open for this long is closed (IDLE_TIMEOUT). */
  readonly idleTimeoutMs: number;
  /** Bytes of unfinished requests all connections may hold together (GRPC_MAX_BUFFERED_BYTES). */
  readonly maxBufferedBytes: number;
  /** Unfinished requests holding bytes, all connections together (GRPC_MAX_BUFFERED_REQUESTS). */
  readonly maxBufferedRequests: number;
  /** One connection may hold at least this (a request of MAX_REQUEST_BYTES, framed). */
  readonly leastConnectionBytes: number;
}

function unrefTimer(ms: number, run: () => void): NodeJS.Timeout {
  const timer = setTimeout(run, Math.min(ms, MAX_TIMER_MS));
  timer.unref();
  return timer;
}

/** One connection's open calls and its idle timer. */
interface Tracked {
  readonly session: H2Session;
  streams: number;
  /** When the last call closed (performance.now()); the idle timer checks it when it fires. */
  idleSinceMs: number;
  idleTimer: NodeJS.Timeout | undefined;
}

/** Told of what the connections' bounds do, for the statistics. */
export interface SessionEvents {
  /** The buffer budget refused a stream, of the connection of `peer`. */
  readonly refused: (reason: BudgetRefusal, peer: string) => void;
  /** A connection went IDLE_TIMEOUT without a call and got its GOAWAY. */
  readonly idleClosed: () => void;
}

const NO_EVENTS: SessionEvents = { refused: () => undefined, idleClosed: () => undefined };

/** Every open connection of one server. */
export class Sessions {
  private readonly open = new Map<H2Connection, Tracked>();
  private readonly budget: BufferBudget;

  /**
   * @param onClosing called before the server closes a connection, for the streams that
   * would otherwise keep it open (health watches).
   */
  constructor(
    private readonly times: SessionTimes,
    private readonly onClosing: (session: H2Session) => void,
    private readonly events: SessionEvents = NO_EVENTS,
  ) {
    this.budget = new BufferBudget(
      times.maxBufferedBytes,
      times.maxBufferedRequests,
      times.leastConnectionBytes,
    );
    this.budget.onRefused = events.refused;
  }

  /** The server's 'session' listener. */
  readonly add = (session: H2Session): void => {
    const tracked: Tracked = {
      session,
      streams: 0,
      idleSinceMs: performance.now(),
      idleTimer: undefined,
    };
    this.open.set(session, tracked);
    session.useBudget(this.budget);
    // Session errors are the peer going away.
    session.on('error', ignore);
    const { maxConnectionAgeMs, maxConnectionAgeGraceMs, headerTimeoutMs } = this.times;
    let ageTimer: NodeJS.Timeout | undefined;
    if (maxConnectionAgeMs > 0 && maxConnectionAgeMs < MAX_TIMER_MS) {
      // Spread by ±10% so connections opened together are not all cut together (as gRPC does).
      const jittered = maxConnectionAgeMs * (0.9 + Math.random() * 0.2);
      ageTimer = unrefTimer(jittered, () => {
        this.close(session, maxConnectionAgeGraceMs);
      });
    }
    // A client's SETTINGS follow its preface: a connection without them by now is not gRPC.
    const prefaceTimer = unrefTimer(headerTimeoutMs, () => {
      session.destroy();
    });
    session.once('remoteSettings', () => {
      clearTimeout(prefaceTimer);
    });
    this.armIdle(session, tracked);
    session.once('close', () => {
      clearTimeout(ageTimer);
      clearTimeout(prefaceTimer);
      clearTimeout(tracked.idleTimer);
      this.open.delete(session);
    });
  };

  /** The server's 'stream' listener: a connection with a call open is not idle. */
  readonly addStream = (stream: H2Stream): void => {
    const tracked = this.open.get(stream.session);
    if (tracked === undefined) return;
    // The idle timer stays armed through calls: re-arming it per call cost a timer each.
    tracked.streams += 1;
    stream.once('close', () => {
      tracked.streams -= 1;
      if (tracked.streams > 0) return;
      tracked.idleSinceMs = performance.now();
      if (tracked.idleTimer === undefined) this.armIdle(tracked.session, tracked);
    });
  };

  /** Closes the connection once it has had no call open for IDLE_TIMEOUT. */
  private armIdle(session: H2Session, tracked: Tracked, ms?: number): void {
    tracked.idleTimer = unrefTimer(ms ?? this.times.idleTimeoutMs, () => {
      tracked.idleTimer = undefined;
      // Busy now: the last call to close arms it again.
      if (tracked.streams > 0 || session.closed || session.destroyed) return;
      const left = tracked.idleSinceMs + this.times.idleTimeoutMs - performance.now();
      // A GOAWAY, as grpc-go's MaxConnectionIdle drains: the client opens a new connection for
      // its next call, and the socket ends once the final GOAWAY is out.
      if (left <= 0) {
        this.events.idleClosed();
        session.close();
      } else this.armIdle(session, tracked, left);
    });
  }

  /** GOAWAY (in two phases), calls in flight may finish; whatever is left after `graceMs` is cut. */
  private close(session: H2Session, graceMs: number): void {
    if (session.closed || session.destroyed) return;
    this.onClosing(session);
    session.close();
    const timer = unrefTimer(graceMs, () => {
      session.destroy();
    });
    session.once('close', () => {
      clearTimeout(timer);
    });
  }

  /**
   * Stops `server` taking connections, sends GOAWAY on the open ones and waits for calls in
   * flight up to `graceMs`; then cuts whatever is left.
   */
  async drain(server: net.Server, graceMs: number): Promise<void> {
    const closed = new Promise<void>((resolve) => {
      if (!server.listening) {
        resolve();
        return;
      }
      server.close(() => {
        resolve();
      });
    });
    for (const { session } of this.open.values()) session.close();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([closed, deadline]);
    clearTimeout(timer);
    for (const { session } of this.open.values()) session.destroy();
  }
}
