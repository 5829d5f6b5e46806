// The server's HTTP/2 connections: tracked for shutdown, aged out after MAX_CONNECTION_AGE.
import type http2 from 'node:http2';
import type net from 'node:net';

/** setTimeout's ceiling; a longer connection age is as good as none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface ConnectionAge {
  /** 0 or above MAX_TIMER_MS: connections live as long as their peer wants. */
  readonly maxConnectionAgeMs: number;
  /** How long calls in flight may finish after the GOAWAY of an aged-out connection. */
  readonly maxConnectionAgeGraceMs: number;
}

function ignore(): void {
  // Session errors are the peer going away.
}

/** Every open connection of one server. */
export class Sessions {
  private readonly open = new Set<http2.ServerHttp2Session>();

  /**
   * @param onClosing called before the server closes a connection, for the streams that
   * would otherwise keep it open (health watches).
   */
  constructor(
    private readonly age: ConnectionAge,
    private readonly onClosing: (session: http2.ServerHttp2Session) => void,
  ) {}

  /** The server's 'session' listener. */
  readonly add = (session: http2.ServerHttp2Session): void => {
    this.open.add(session);
    session.on('error', ignore);
    const { maxConnectionAgeMs, maxConnectionAgeGraceMs } = this.age;
    let ageTimer: NodeJS.Timeout | undefined;
    if (maxConnectionAgeMs > 0 && maxConnectionAgeMs < MAX_TIMER_MS) {
      // Spread by ±10% so connections opened together are not all cut together (as gRPC does).
      const jittered = maxConnectionAgeMs * (0.9 + Math.random() * 0.2);
      ageTimer = setTimeout(() => {
        this.close(session, maxConnectionAgeGraceMs);
      }, jittered);
      ageTimer.unref();
    }
    session.once('close', () => {
      if (ageTimer !== undefined) clearTimeout(ageTimer);
      this.open.delete(session);
    });
  };

  /** GOAWAY now, calls in flight may finish; whatever is left after `graceMs` is cut. */
  private close(session: http2.ServerHttp2Session, graceMs: number): void {
    if (session.closed || session.destroyed) return;
    this.onClosing(session);
    session.close();
    const timer = setTimeout(
      () => {
        session.destroy();
      },
      Math.min(graceMs, MAX_TIMER_MS),
    );
    timer.unref();
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
    for (const session of this.open) session.close();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([closed, deadline]);
    clearTimeout(timer);
    for (const session of this.open) session.destroy();
  }
}
