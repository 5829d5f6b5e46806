// A statsd listener for tests: every line received over UDP or TCP, in order.
import dgram from 'node:dgram';
import net from 'node:net';

export class StatsdCapture {
  readonly lines: string[] = [];
  /** How many datagrams (or TCP chunks) arrived. */
  packets = 0;

  private constructor(
    readonly port: number,
    private readonly closeServer: () => Promise<void>,
  ) {}

  private take(text: string): void {
    this.packets += 1;
    for (const line of text.split('\n')) if (line !== '') this.lines.push(line);
  }

  static async udp(): Promise<StatsdCapture> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => {
      socket.bind(0, '127.0.0.1', resolve);
    });
    const capture = new StatsdCapture(
      socket.address().port,
      () =>
        new Promise((resolve) =>
          socket.close(() => {
            resolve();
          }),
        ),
    );
    socket.on('message', (msg) => {
      capture.take(msg.toString());
    });
    return capture;
  }

  /** A TCP collector on `port`, or on one the system picks. */
  static async tcp(port = 0): Promise<StatsdCapture> {
    const sockets = new Set<net.Socket>();
    const holder: { capture?: StatsdCapture } = {};
    const server = net.createServer((socket) => {
      sockets.add(socket);
      let pending = '';
      socket.on('data', (chunk: Buffer) => {
        pending += chunk.toString();
        const end = pending.lastIndexOf('\n');
        if (end < 0) return;
        holder.capture?.take(pending.slice(0, end));
        pending = pending.slice(end + 1);
      });
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const capture = new StatsdCapture((server.address() as net.AddressInfo).port, () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
    });
    holder.capture = capture;
    return capture;
  }

  /** Counter totals by name over the lines from `from` on: `name:3|c` and `name:2|c` give 5. */
  counters(from = 0): Map<string, number> {
    const totals = new Map<string, number>();
    for (const line of this.lines.slice(from)) {
      const match = /^(.*):(-?[\d.]+)\|c(\|.*)?$/.exec(line);
      if (match === null) continue;
      const key = `${match[1] ?? ''}${match[3] ?? ''}`;
      totals.set(key, (totals.get(key) ?? 0) + Number(match[2]));
    }
    return totals;
  }

  close(): Promise<void> {
    return this.closeServer();
  }
}
