// Plain statsd over UDP: lines batched into datagrams below a safe MTU.
import dgram from 'node:dgram';
import net from 'node:net';
import type { StatsSink } from '../sink';

/** Keeps datagrams under the common 1500-byte Ethernet MTU minus IP and UDP headers. */
const MAX_DATAGRAM_BYTES = 1432;

export interface StatsdSinkOptions {
  readonly host: string;
  readonly port: number;
  /** Called when a datagram cannot be sent; UDP statistics never fail the service. */
  readonly onError?: (err: Error) => void;
}

export function formatNumber(value: number): string {
  return Number.isInteger(value)
    ? String(value)
    : value.toFixed(3).replace(/0+$/, '').replace(/\.$/, '');
}

export class StatsdSink implements StatsSink {
  private readonly socket: dgram.Socket;
  private buffer = '';
  private pending: Promise<void>[] = [];

  constructor(private readonly options: StatsdSinkOptions) {
    this.socket = dgram.createSocket(net.isIPv6(options.host) ? 'udp6' : 'udp4');
    this.socket.on('error', (err) => options.onError?.(err));
    this.socket.unref();
  }

  private line(text: string): void {
    if (this.buffer.length > 0 && this.buffer.length + 1 + text.length > MAX_DATAGRAM_BYTES)
      this.send();
    this.buffer = this.buffer.length === 0 ? text : `${this.buffer}\n${text}`;
  }

  private send(): void {
    if (this.buffer.length === 0) return;
    const payload = Buffer.from(this.buffer);
    this.buffer = '';
    this.pending.push(
      new Promise((resolve) => {
        this.socket.send(payload, this.options.port, this.options.host, (err) => {
          if (err !== null) this.options.onError?.(err);
          resolve();
        });
      }),
    );
  }

  counter(name: string, delta: number): void {
    this.line(`${name}:${formatNumber(delta)}|c`);
  }

  gauge(name: string, value: number): void {
    this.line(`${name}:${formatNumber(value)}|g`);
  }

  timing(name: string, ms: number, sampleRate: number): void {
    this.line(
      `${name}:${formatNumber(ms)}|ms${sampleRate < 1 ? `|@${formatNumber(sampleRate)}` : ''}`,
    );
  }

  async flush(): Promise<void> {
    this.send();
    const pending = this.pending;
    this.pending = [];
    await Promise.all(pending);
  }

  async close(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve) => {
      this.socket.close(() => {
        resolve();
      });
    });
  }
}
