// A keep-alive HTTP/1.1 client for POST /json that writes prebuilt requests and reads only the
// status line and Content-Length, for the same reason as the raw HTTP/2 client: node:http's
// client would cost the load generator as much CPU as the server it measures.
import net from 'node:net';

const HEADER_END = Buffer.from('\r\n\r\n', 'latin1');

export function jsonRequest(host: string, port: number, body: Buffer): Buffer {
  const head =
    `POST /json HTTP/1.1\r\nhost: ${host}:${String(port)}\r\n` +
    `content-type: application/json\r\ncontent-length: ${String(body.length)}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

/** One connection, one request in flight at a time (HTTP/1.1 without pipelining). */
export class RawHttpConnection {
  private readonly socket: net.Socket;
  private buffered: Buffer = Buffer.alloc(0);
  private waiting: ((outcome: string) => void) | undefined;
  private isClosed = false;

  constructor(host: string, port: number) {
    this.socket = net.connect({ host, port, noDelay: true });
    this.socket.on('data', (chunk: Buffer) => {
      this.socket.cork();
      try {
        this.onData(chunk);
      } finally {
        this.socket.uncork();
      }
    });
    const fail = (): void => {
      this.isClosed = true;
      const done = this.waiting;
      this.waiting = undefined;
      done?.('closed');
    };
    this.socket.on('error', fail);
    this.socket.on('close', fail);
  }

  call(request: Buffer, done: (outcome: string) => void): void {
    if (this.isClosed || this.waiting !== undefined) {
      done('closed');
      return;
    }
    this.waiting = done;
    this.socket.write(request);
  }

  close(): void {
    this.isClosed = true;
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const end = this.buffered.indexOf(HEADER_END);
    if (end < 0) return;
    const head = this.buffered.toString('latin1', 0, end);
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (length === null) {
      // Every answer from the service carries a length; anything else ends the measurement.
      this.close();
      return;
    }
    const total = end + 4 + Number(length[1]);
    if (this.buffered.length < total) return;
    this.buffered = this.buffered.subarray(total);
    const done = this.waiting;
    this.waiting = undefined;
    done?.(`http-${head.slice(9, 12)}`);
  }
}
