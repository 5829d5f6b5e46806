#!/usr/bin/env node
// Exits 0 when the local service's /healthcheck answers 200: the container HEALTHCHECK, no curl needed.
const http = require('node:http');

if (process.argv.slice(2).some((arg) => ['-h', '-help', '--help'].includes(arg))) {
  process.stdout.write(`usage: ratelimit-healthcheck
Asks the local service's /healthcheck (on HOST and PORT, as the service reads them) and exits 0
when it answers 200, 1 otherwise: a container HEALTHCHECK that needs no curl.
`);
  process.exit(0);
}

// The listener's own settings decide where to ask; a wildcard address is reached on loopback.
const host = process.env.HOST;
const address =
  host === undefined || host === '' || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
const port = Number(process.env.PORT || 8080);
const timeoutMs = 2000;

const req = http.get({ host: address, port, path: '/healthcheck', timeout: timeoutMs }, (res) => {
  res.resume();
  if (res.statusCode !== 200) process.stderr.write(`/healthcheck answered ${res.statusCode}\n`);
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
req.on('error', (err) => {
  process.stderr.write(`/healthcheck on ${address}:${port}: ${err.message}\n`);
  process.exit(1);
});
