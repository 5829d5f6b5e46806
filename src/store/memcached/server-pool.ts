// The connections to one memcached server, shaped as the server object memjs's Client drives.
import { MemcachedConnection, type ConnectionTarget, type MemcachedResponse } from './connection';

/**
 * The members of memjs's Server that its Client calls (memjs 1.3: `perform` registers both
 * callbacks for a sequence number, then writes; `close` ends the connection). memjs's own
 * Server speaks plain TCP only; this one adds TLS, a pool of connections and per-request
 * deadlines, and memjs keeps building the requests and picking the server.
 */
export interface MemjsServerSide {
  readonly host: string;
  readonly port: number;
  onResponse(seq: number, fn: (response: MemcachedResponse) => void): void;
  onError(seq: number, fn: (err: Error) => void): void;
  write(blob: Buffer): void;
  close(): void;
}

export interface ServerPoolOptions extends ConnectionTarget {
  /** The address as configured or resolved (`host:port`), for messages and identity. */
  readonly address: string;
  /** Connections kept to this server (MEMCACHE_MAX_IDLE_CONNS); requests are spread over them. */
  readonly connections: number;
  /** Called when the server starts or stops answering. */
  readonly onStateChange: (pool: ServerPool) => void;
  readonly onConnectionError: (pool: ServerPool, err: Error) => void;
}

export class ServerPool implements MemjsServerSide {
  readonly host: string;
  readonly port: number;
  private readonly connections: MemcachedConnection[];
  private next = 0;
  private onNextResponse: ((response: MemcachedResponse) => void) | undefined;
  private onNextError: ((err: Error) => void) | undefined;
  private isAnswering = true;

  constructor(private readonly options: ServerPoolOptions) {
    this.host = options.host;
    this.port = options.port;
    const events = {
      onUp: (): void => {
        this.setAnswering(true);
      },
      onDown: (err: Error): void => {
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

  onResponse(_seq: number, fn: (response: MemcachedResponse) => void): void {
    // memjs calls onResponse, onError and write back to back for one request.
    this.onNextResponse = (response) => {
      this.setAnswering(true);
      fn(response);
    };
  }

  onError(_seq: number, fn: (err: Error) => void): void {
    this.onNextError = fn;
  }

  write(blob: Buffer): void {
    const onResponse = this.onNextResponse;
    const onError = this.onNextError;
    this.onNextResponse = undefined;
    this.onNextError = undefined;
    if (onResponse === undefined || onError === undefined) {
      throw new Error('memjs wrote a request without registering its callbacks');
    }
    const connection = this.connections[this.next] ?? this.connections[0];
    this.next = (this.next + 1) % this.connections.length;
    connection?.send(blob, onResponse, onError);
  }

  close(): void {
    for (const c of this.connections) c.close();
  }
}
