// The HTTP/2 server side against node:http2's client (nghttp2: HPACK with Huffman and the
// dynamic table, flow control) and against raw frames for what a well-behaved client never does.
import http2 from 'node:http2';
import { ErrorCode } from '../../../../src/server/h2';
import { serveEcho, type Served } from '../../../helpers/h2-echo';

let served: Served;
beforeEach(async () => {
  served = await serveEcho();
});
afterEach(async () => {
  await served.close();
});

function client(settings: http2.Settings = {}): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${String(served.port)}`, { settings });
    session.once('remoteSettings', () => {
      resolve(session);
    });
    session.once('error', reject);
  });
}

interface Answer {
  readonly headers: http2.IncomingHttpHeaders;
  readonly trailers: http2.IncomingHttpHeaders;
  readonly body: Buffer;
}

function request(
  session: http2.ClientHttp2Session,
  headers: http2.OutgoingHttpHeaders,
  body?: Buffer,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': '/', ...headers });
    let answer: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (answer = h));
    stream.on('trailers', (t) => (trailers = t));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('close', () => {
      resolve({ headers: answer, trailers, body: Buffer.concat(chunks) });
    });
    stream.end(body);
  });
}

describe('with node:http2 as the client', () => {
  it('reads Huffman-coded and indexed headers, every printable byte included', async () => {
    const session = await client();
    const value = Array.from({ length: 0xff - 0x20 }, (_, i) => String.fromCharCode(0x20 + i))
      .join('')
      .replace(/\x7f/, '')
      .trim();
    for (let i = 0; i < 3; i++) {
      // The same headers again: the second and third come as dynamic table references.
      const answer = await request(session, { 'x-echo': 'x-value', 'x-value': value });
      expect(answer.headers['x-echoed']).toBe(value);
      expect(answer.trailers['grpc-status']).toBe('0');
    }
    session.close();
  });

  it('takes a request far larger than the initial windows, giving window back', async () => {
    const session = await client();
    const answer = await request(session, {}, Buffer.alloc(3 * 1024 * 1024, 1));
    expect(answer.headers['x-received']).toBe(String(3 * 1024 * 1024));
    session.close();
  });

  it('holds DATA within a small client window and sends it as the window opens', async () => {
    const session = await client({ initialWindowSize: 1000, maxFrameSize: 16_384 });
    const answers = await Promise.all(
      [0, 1, 2].map(() => request(session, { 'reply-bytes': 200_000 })),
    );
    for (const answer of answers) {
      expect(answer.body.length).toBe(200_000);
      expect(answer.trailers['grpc-status']).toBe('0');
    }
    session.close();
  });

  it('answers 200 before DATA when a handler ends a stream it never answered', async () => {
    const session = await client();
    const answer = await request(session, { ':path': '/bare' });
    expect(answer.headers[':status']).toBe(200);
    expect(answer.body.toString()).toBe('bare');
    session.close();
  });

  it('answers many streams at once on one connection', async () => {
    const session = await client();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => request(session, {}, Buffer.alloc(i))),
    );
    expect(answers.map((a) => Number(a.headers['x-received']))).toEqual(
      Array.from({ length: 50 }, (_, i) => i),
    );
    session.close();
  });

  it('on close(): GOAWAY, the call in flight still answered, then the connection ends', async () => {
    const session = await client();
    const goaway = new Promise<number>((resolve) => session.once('goaway', resolve));
    const ended = new Promise((resolve) => session.once('close', resolve));
    const seen = served.nextStream();
    const stream = session.request({ ':method': 'POST', ':path': '/', 'reply-bytes': 10 });
    stream.write(Buffer.alloc(5));
    await seen;
    served.sessions[0]?.close();
    expect(await goaway).toBe(ErrorCode.NO_ERROR);
    const body: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => body.push(chunk));
    stream.end(Buffer.alloc(5));
    await ended;
    expect(Buffer.concat(body).length).toBe(10);
  });
});
