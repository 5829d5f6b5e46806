// Shared reads (src/server/h2/shared-reads.ts) move an accepted socket's handle into a socket
// of their own, through two fields Node does not document; these suites run on every Node CI
// tests (.ci/run), so the start-up check and the path it falls back to are tried on each.
import http2 from 'node:http2';
import net from 'node:net';
import { once } from 'node:events';
import { acceptH2 } from '../../../../src/server/h2';
import { checkSharedReads, readIntoShared } from '../../../../src/server/h2/shared-reads';
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

function connectionsOf(server: net.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.getConnections((err, n) => {
      if (err) reject(err);
      else resolve(n);
    });
  });
}

describe('the start-up check', () => {
  afterEach(async () => {
    jest.restoreAllMocks();
    await checkSharedReads();
  });

  it('finds moved sockets counted and read on this Node', async () => {
    expect(await checkSharedReads()).toEqual({ isOn: true, why: '' });
  });

  it('turns moving off where the server does not count a moved socket', async () => {
    // As a Node would behave whose server kept its count somewhere other than `_server`.
    jest.spyOn(net.Server.prototype, 'getConnections').mockImplementation(function (
      this: net.Server,
      callback,
    ) {
      process.nextTick(callback, null, 0);
      return this;
    });
    expect(await checkSharedReads()).toEqual({
      isOn: false,
      why: 'the server does not count a moved socket',
    });
    const { server, port } = await plainServer();
    const accepted = once(server, 'connection') as Promise<[net.Socket]>;
    const client = net.connect(port, '127.0.0.1');
    const [socket] = await accepted;
    const moved = readIntoShared(socket, () => undefined);
    moved?.destroy();
    client.destroy();
    socket.destroy();
    server.close();
    expect(moved).toBeUndefined();
  });
});

async function plainServer(): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer({ pauseOnConnect: true });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port };
}

it('with moving turned off, a real listener serves HTTP/2 read through data events', async () => {
  expect(await checkSharedReads(true)).toEqual({ isOn: false, why: 'turned off' });
  const { server, port } = await plainServer();
  const sockets: net.Socket[] = [];
  let client: http2.ClientHttp2Session | undefined;
  try {
    server.on('connection', (socket: net.Socket) => sockets.push(socket));
    acceptH2(
      server,
      false,
      { maxConcurrentStreams: 10, maxHeaderListBytes: 16 * 1024 },
      {
        session: () => undefined,
        stream: (stream) => {
          let received = 0;
          stream.on('data', (chunk: Buffer) => (received += chunk.length));
          stream.on('end', () => {
            stream.respond({ ':status': 200, 'x-received': String(received) });
            stream.end(Buffer.from('ok'));
          });
        },
      },
    );
    client = http2.connect(`http://127.0.0.1:${String(port)}`);
    client.on('error', () => undefined);
    const request = client.request({ ':method': 'POST', ':path': '/' });
    request.end(Buffer.alloc(100_000, 0x61));
    const [headers] = (await once(request, 'response')) as [http2.IncomingHttpHeaders];
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    expect(headers['x-received']).toBe('100000');
    expect(Buffer.concat(chunks).toString()).toBe('ok');
    // The accepted socket itself was read (no move), and its server counts and waits for it.
    expect(sockets).toHaveLength(1);
    expect(sockets[0]?.destroyed).toBe(false);
    expect(await connectionsOf(server)).toBe(1);
    let isServerClosed = false;
    server.close(() => {
      isServerClosed = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(isServerClosed).toBe(false);
    client.destroy();
    await eventually(() => isServerClosed, { what: 'the server to close' });
  } finally {
    // Whatever failed, nothing stays open to keep jest from exiting.
    client?.destroy();
    for (const socket of sockets) socket.destroy();
    if (server.listening) server.close();
    await checkSharedReads();
  }
});
