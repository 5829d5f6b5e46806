import net from 'node:net';
import { once } from 'node:events';
import { readIntoShared } from '../../../../src/server/h2/shared-reads';
import { eventually } from '../../../helpers/eventually';

/** A loopback server whose connections are moved into shared reads; what they read, copied. */
async function movingServer(): Promise<{
  server: net.Server;
  port: number;
  moved: Promise<net.Socket>;
  reads: Buffer[];
  views: Buffer[];
}> {
  const reads: Buffer[] = [];
  const views: Buffer[] = [];
  const server = net.createServer({ pauseOnConnect: true });
  const moved = new Promise<net.Socket>((resolve, reject) => {
    server.once('connection', (accepted: net.Socket) => {
      const socket = readIntoShared(accepted, () => (bytes) => {
        views.push(bytes);
        reads.push(Buffer.from(bytes));
      });
      if (socket === undefined) reject(new Error('this Node cannot move an accepted socket'));
      else resolve(socket);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port, moved, reads, views };
}

it('reads a moved connection into one buffer, and it still counts as the server’s', async () => {
  const { server, port, moved, reads, views } = await movingServer();
  const client = net.connect(port, '127.0.0.1');
  const socket = await moved;
  client.write('first');
  await eventuallyRead(reads, 'first');
  client.write('second');
  await eventuallyRead(reads, 'firstsecond');
  // Every read was a view of the same memory, and it was overwritten after each (the suites
  // run with H2_POISON_READS=1): only the copies taken during the call hold the bytes.
  expect(new Set(views.map((v) => v.buffer)).size).toBe(1);
  expect(views.every((v) => v.every((b) => b === 0xa5))).toBe(true);
  // The moved socket writes, and the server waits for it to close before it does.
  socket.write('answer');
  const [answer] = (await once(client, 'data')) as [Buffer];
  expect(answer.toString()).toBe('answer');
  const count = await new Promise<number>((resolve, reject) => {
    server.getConnections((err, n) => {
      if (err) reject(err);
      else resolve(n);
    });
  });
  expect(count).toBe(1);
  let isServerClosed = false;
  server.close(() => {
    isServerClosed = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  expect(isServerClosed).toBe(false);
  client.end();
  await once(socket, 'close');
  await eventually(() => isServerClosed, { what: 'the server to close' });
});

it('leaves a socket it cannot move untouched', () => {
  const unconnected = new net.Socket();
  expect(readIntoShared(unconnected, () => undefined)).toBeUndefined();
  expect(unconnected.destroyed).toBe(false);
  unconnected.destroy();
});

async function eventuallyRead(reads: Buffer[], text: string): Promise<void> {
  await eventually(() => {
    expect(Buffer.concat(reads).toString()).toBe(text);
  });
}
