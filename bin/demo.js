#!/usr/bin/env node
// `npm run demo`: the service on the embedded memory backend with the example configuration.
require('../dist/src/node-check.js').requireSupportedNode('ratelimit');
const path = require('node:path');

const defaults = {
  BACKEND_TYPE: 'memory',
  RUNTIME_ROOT: path.join(__dirname, '..', 'examples'),
  RUNTIME_SUBDIRECTORY: 'ratelimit',
  RUNTIME_APPDIRECTORY: 'config',
  RUNTIME_WATCH_ROOT: 'false',
  USE_STATSD: 'false',
  STATS_FLUSH_INTERVAL: '60s',
  LOG_LEVEL: 'info',
};
for (const [name, value] of Object.entries(defaults)) {
  if (process.env[name] === undefined) process.env[name] = value;
}
require('../dist/src/main.js').runFromCommandLine();
