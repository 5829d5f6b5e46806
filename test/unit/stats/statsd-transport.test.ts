// The statsd transport: TCP lines, a new connection after the collector drops one, DogStatsD tags.
import net from 'node:net';
import { StatsdTransport } from '../../../src/stats/sinks/statsd-client';
import { MemoryLogger } from '../../../src/lib/logger';
import { loadSettings } from '../../../src/settings';
import { createSinks, DogStatsdSink, StatsStore } from '../../../src/stats';
import { eventually } from '../../helpers/eventually';
import { unusedPort } from '../../helpers/ports';
import { StatsdCapture } from '../../helpers/statsd-capture';

/** A TCP collector that keeps its connections, so a test can drop them. */
async function collector(): Promise<{
  port: number;
  lines: string[];
  connections: net.Socket[];
  close: () => Promise<void>;
}> {
  const lines: string[] = [];
  const connections: net.Socket[] = [];
  const server = net.createServer((socket) => {
    connections.push(socket);
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      lines.push(...parts);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    lines,
    connections,
    close: () => {
      for (const socket of connections) socket.destroy();
      return new Promise((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
    },
  };
}

describe('StatsdTransport over TCP', () => {
  it('writes newline-terminated lines and opens a new connection once the collector drops one', async () => {
    const tcp = await collector();
    const transport = new StatsdTransport({
      host: '127.0.0.1',
      port: tcp.port,
      protocol: 'tcp',
      onError: () => undefined,
    });
    try {
      transport.send('a:1|c');
      transport.send('b:2|g');
      await transport.flush();
      await eventually(() => tcp.lines.length === 2, { what: 'the first two lines' });
      expect(tcp.lines).toEqual(['a:1|c', 'b:2|g']);
      tcp.connections[0]?.destroy();
      // The first batch after the drop may be lost with the old connection; the next ones arrive.
      await eventually(
        async () => {
          transport.send('c:3|c');
          await transport.flush();
          return tcp.connections.length >= 2 && tcp.lines.includes('c:3|c');
        },
        { what: 'a line on a second connection' },
      );
    } finally {
      await transport.close();
      await tcp.close();
    }
  });

  it('reports a refused connection to onError and does not throw', async () => {
    const closed = await StatsdCapture.tcp();
    const port = closed.port;
    await closed.close();
    const errors: Error[] = [];
    const transport = new StatsdTransport({
      host: '127.0.0.1',
      port,
      protocol: 'tcp',
      onError: (err) => errors.push(err),
    });
    transport.send('lost:1|c');
    await transport.flush();
    await eventually(() => errors.length > 0, { what: 'the connection error' });
    expect(errors[0]?.message).toMatch(/ECONNREFUSED/);
    await transport.close();
  });
});

describe('sending to a statsd that is not up yet', () => {
  it('warns once while it is away, each failure alike at debug, and says once when it answers', async () => {
    const port = await unusedPort();
    const logger = new MemoryLogger();
    const settings = loadSettings({
      USE_STATSD: 'true',
      STATSD_PROTOCOL: 'tcp',
      STATSD_HOST: '127.0.0.1',
      STATSD_PORT: String(port),
    }).stats.sinks;
    const [sink] = createSinks(settings, { store: new StatsStore(), extraTags: {}, logger });
    const failures = (): typeof logger.lines =>
      logger.lines.filter((l) => l.message.startsWith('cannot send statistics to statsd'));
    try {
      for (let attempt = 1; attempt <= 3; attempt++) {
        sink!.counter('early', 1);
        await sink!.flush();
        await eventually(() => failures().length === attempt, { what: `failure ${attempt}` });
      }
      expect(failures().map((l) => l.level)).toEqual(['warning', 'debug', 'debug']);
      const capture = await StatsdCapture.tcp(port);
      try {
        sink!.counter('late', 1);
        await sink!.flush();
        await eventually(() => capture.lines.includes('late:1|c'), { what: 'a line to arrive' });
        expect(logger.lines.filter((l) => l.level === 'info')).toEqual([
          expect.objectContaining({ message: 'sending statistics to statsd again' }),
        ]);
      } finally {
        await capture.close();
      }
    } finally {
      await sink!.close();
    }
  });
});

describe('DogStatsdSink tags', () => {
  it('writes tags after |# and turns characters that break the protocol into _', async () => {
    const capture = await StatsdCapture.udp();
    try {
      const sink = new DogStatsdSink({
        host: '127.0.0.1',
        port: capture.port,
        protocol: 'udp',
        extraTags: { env: 'prod' },
        mogrifiers: [
          { name: 'R', pattern: '^rule\\.(.+)$', metricName: 'rule', tags: { value: '$1' } },
        ],
        onError: (err) => {
          throw err;
        },
      });
      sink.counter('rule.a,b|c#d', 1);
      sink.gauge('plain', 2);
      await sink.close();
      await eventually(() => capture.lines.length === 2, { what: 'two lines' });
      expect(capture.lines).toEqual(['rule:1|c|#env:prod,value:a_b_c_d', 'plain:2|g|#env:prod']);
    } finally {
      await capture.close();
    }
  });
});
