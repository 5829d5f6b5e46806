// The statsd transport: pre-formatted lines batched below the MTU and sent over UDP or TCP.
import dgram from 'node:dgram';
import net from 'node:net';
import { dogStatsdTagSuffix } from './format';

export interface StatsdTransportOptions {
  readonly host: string;
  readonly port: number;
  readonly protocol: 'udp' | 'tcp';
  /** Called when sending fails; statistics never fail the service. */
  readonly onError: (err: Error) => void;
  /** Called when a TCP connection opens, or a UDP datagram is handed on without error. */
  readonly onSent?: () => void;
}

/** 1432 bytes keeps a UDP datagram inside a 1500-byte Ethernet frame. */
export const MAX_BATCH_BYTES = 1432;

/** Where batches go: one datagram each, or one write each on a kept TCP connection. */
interface Wire {
  send(batch: string): Promise<void>;
  close(): Promise<void>;
}

class UdpWire implements Wire {
  private socket: dgram.Socket | undefined;

  constructor(private readonly options: StatsdTransportOptions) {}

  send(batch: string): Promise<void> {
    if (this.socket === undefined) {
      this.socket = dgram.createSocket('udp4');
      this.socket.on('error', this.options.onError);
      // Statistics never keep the process alive.
      this.socket.unref();
    }
    const socket = this.socket;
    return new Promise((resolve) => {
      socket.send(batch, this.options.port, this.options.host, (err) => {
        if (err !== null) this.options.onError(err);
        else this.options.onSent?.();
        resolve();
      });
    });
  }

  close(): Promise<void> {
    const socket = this.socket;
    this.socket = undefined;
    return new Promise((resolve) => {
      if (socket === undefined) resolve();
      else socket.close(resolve);
    });
  }
}

/** Lines end with a newline on TCP; a lost connection is opened again by the next batch. */
class TcpWire implements Wire {
  private socket: net.Socket | undefined;

  constructor(private readonly options: StatsdTransportOptions) {}

  private connection(): net.Socket {
    if (this.socket !== undefined && !this.socket.destroyed) return this.socket;
    const socket = net.connect(this.options.port, this.options.host);
    socket.setKeepAlive(true);
    socket.unref();
    socket.on('error', this.options.onError);
    socket.on('connect', () => {
      this.options.onSent?.();
    });
    socket.on('close', () => {
      if (this.socket === socket) this.socket = undefined;
    });
    this.socket = socket;
    return socket;
  }

  send(batch: string): Promise<void> {
    const socket = this.connection();
    return new Promise((resolve) => {
      // The callback runs once the bytes are handed on, or with the error that destroyed the
      // socket; that error has already reached onError through the 'error' event.
      socket.write(`${batch}\n`, () => {
        resolve();
      });
    });
  }

  close(): Promise<void> {
    const socket = this.socket;
    this.socket = undefined;
    return new Promise((resolve) => {
      if (socket === undefined || socket.destroyed) resolve();
      else socket.end(resolve);
    });
  }
}

/**
 * Queues lines this service formats itself (so counters, timers with sample rates and tags come
 * out exactly as the reference writes them) and sends them in batches of whole lines of at
 * most MAX_BATCH_BYTES: when a line would not fit, and on flush.
 */
export class StatsdTransport {
  private readonly wire: Wire;
  private batch = '';
  private readonly sending = new Set<Promise<void>>();

  constructor(options: StatsdTransportOptions) {
    this.wire = options.protocol === 'tcp' ? new TcpWire(options) : new UdpWire(options);
  }

  /** Queues one line, with DogStatsD tags when given. */
  send(line: string, tags?: readonly string[]): void {
    const tagged = tags === undefined ? line : line + dogStatsdTagSuffix(tags);
    const joined = this.batch === '' ? tagged : `${this.batch}\n${tagged}`;
    if (Buffer.byteLength(joined) <= MAX_BATCH_BYTES || this.batch === '') {
      this.batch = joined;
      return;
    }
    this.sendBatch();
    this.batch = tagged;
  }

  private sendBatch(): void {
    if (this.batch === '') return;
    const sent = this.wire.send(this.batch);
    this.batch = '';
    this.sending.add(sent);
    void sent.then(() => this.sending.delete(sent));
  }

  /** Sends what is queued; resolves once every batch so far has been handed to the socket. */
  async flush(): Promise<void> {
    this.sendBatch();
    await Promise.all(this.sending);
  }

  async close(): Promise<void> {
    await this.flush();
    await this.wire.close();
  }
}
