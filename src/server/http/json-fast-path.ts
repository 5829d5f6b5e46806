// POST /json without express for the common request: a length-delimited body of UTF-8 text,
// not content-encoded. express's routing and body parsing cost several times the decision
// itself; anything unusual (chunked, compressed, another charset, too large) still goes
// through express, so behaviour at the edges stays in one place.
import type http from 'node:http';
import { answerJson, type JsonAnswerDeps } from './json-answer';

export interface JsonFastPathOptions extends JsonAnswerDeps {
  /** Largest body taken here; larger ones go to express, which answers 413. */
  readonly maxBodyBytes: number;
}

/** Whether this request can skip express: only the plain case. */
function isPlain(req: http.IncomingMessage, maxBodyBytes: number): boolean {
  if (req.method !== 'POST') return false;
  if (req.url !== '/json') return false;
  const length = req.headers['content-length'];
  if (length === undefined || Number(length) > maxBodyBytes) return false;
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') return false;
  const type = req.headers['content-type'];
  return type === undefined || !/charset=/i.test(type) || /charset="?utf-8"?/i.test(type);
}

/** Wraps the express application: plain /json calls are answered here, the rest there. */
export function withJsonFastPath(
  app: http.RequestListener,
  options: JsonFastPathOptions,
): http.RequestListener {
  return (req, res) => {
    if (!isPlain(req, options.maxBodyBytes)) {
      app(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text =
        chunks.length === 1
          ? (chunks[0]?.toString('utf8') ?? '')
          : Buffer.concat(chunks).toString('utf8');
      void answerJson(text, req.headers, options).then(({ status, payload }) => {
        const body = JSON.stringify(payload);
        res.writeHead(status, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(body),
        });
        res.end(body);
      });
    });
  };
}
