// The connections to one memcached server: requests spread over them in turn, and whether the
// server answers.
import { noopRequest, type MemcachedResponse } from './binary-protocol';
import { MemcachedConnection, type ConnectionTarget } from './connection';

export interface ServerPoolOptions extends ConnectionTarget {
  /** The address as configured or resolved (`host:port`), for messages and identity. */
  readonly address: string;
  /** Connections kept to this server (MEMCACHE_MAX_IDLE_CONNS); requests are spread over them. */
  readonly connections: number;
  /**
   * False: the server counts as not answering until it first does (the servers of the first
   * list, at start-up). Absent or true: answering until a connection fails.
   */
  readonly isUpAtStart?: boolean;
  /** Called when the server starts or stops answering. */
  readonly onStateChange: (pool: ServerPool) => void;
  readonly onConnectionError: (pool: ServerPool, err: Error) => void;
}

export class ServerPool {
  private readonly connections: MemcachedConnection[];
  private next = 0;
  private isAnswering: boolean;
  /**
   * Connection failures so far. A response to a request written before the latest failure does
   * not bring the server back: when a server is killed under calls, one connection's reset can
   * come after another's last answers, and the outage would be logged twice within a millisecond.
   */
  private failures = 0;

  constructor(private readonly options: ServerPoolOptions) {
    this.isAnswering = options.isUpAtStart ?? true;
    const events = {
      onUp: (): void => {
        this.setAnswering(true);
      },
      onDown: (err: Error): void => {
        this.failures += 1;
        options.onConnectionError(this, err);
        this.setAnswering(false);
      },
    };
    this.connections = Array.from(
      { length: Math.max(1, options.connections) },
      () => new MemcachedConnection(options, events),
    );
  }

  get address(): string {
    return this.options.address;
  }

  /** False from a connection failure until a connection to the server works again. */
  get isUp(): boolean {
    return this.isAnswering;
  }

  /** Requests written to this server and not answered yet. */
  get inFlight(): number {
    let total = 0;
    for (const c of this.connections) total += c.inFlight;
    return total;
  }

  private setAnswering(isAnswering: boolean): void {
    if (this.isAnswering === isAnswering) return;
    this.isAnswering = isAnswering;
    this.options.onStateChange(this);
  }

  /**
   * Writes one request on the next connection in turn; resolves with its response, or rejects
   * with a MemcachedIoError within the timeout. No retry: a resent increment could count twice.
   */
  send(request: Buffer): Promise<MemcachedResponse> {
    const connection = this.connections[this.next] ?? this.connections[0];
    this.next = (this.next + 1) % this.connections.length;
    return this.sendOn(connection, request);
  }

  private sendOn(
    connection: MemcachedConnection | undefined,
    request: Buffer,
  ): Promise<MemcachedResponse> {
    return new Promise((resolve, reject) => {
      if (connection === undefined) throw new Error('a server pool without connections');
      const failuresBefore = this.failures;
      connection.send(
        request,
        (response) => {
          if (this.failures === failuresBefore) this.setAnswering(true);
          resolve(response);
        },
        reject,
      );
    });
  }

  /**
   * Sends a no-op on the first connection, leaving the turn of requests where it is (two
   * requests of one call then still go out on connections opened alike): resolves once the
   * server answers (the pool is then up), rejects with a MemcachedIoError when it cannot be
   * reached or does not answer within the timeout.
   */
  async probe(): Promise<void> {
    await this.sendOn(this.connections[0], noopRequest());
  }

  close(): void {
    for (const c of this.connections) c.close();
  }
}
