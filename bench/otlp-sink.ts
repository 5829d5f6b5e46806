// `node dist/bench/otlp-sink.js PORT`: an OTLP/HTTP receiver that reads and drops every export,
// so the tracing rows of the bench pay for making and sending spans, not for a collector.
import http from 'node:http';

const port = Number(process.argv[2]);
http
  .createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  })
  .listen(port, '127.0.0.1');
