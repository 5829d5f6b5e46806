// A raw HTTP/1.1 exchange over a socket, for request targets and methods fetch() would refuse
// or rewrite (`//`, `*`, absolute forms, made-up methods).
import net from 'node:net';

/** Sends `head` (the request line and headers, CRLF-separated) and reads the status line. */
export function rawRequest(
  port: number,
  requestLine: string,
  options: { timeoutMs?: number } = {},
): Promise<{ status: number | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer to ${JSON.stringify(requestLine)} within the time limit`));
    }, options.timeoutMs ?? 5000);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      // A server that answers a request it cannot parse and closes at once may reset the
      // connection while our bytes are still arriving: the answer it sent first still counts.
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (err.code === 'ECONNRESET' && match !== null) resolve({ status: Number(match[1]), text });
      else reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: match === null ? undefined : Number(match[1]), text });
    });
    socket.write(`${requestLine}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  });
}
