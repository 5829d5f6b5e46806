#!/usr/bin/env node
// One ShouldRateLimit call: ratelimit-client -dial_string host:port -domain d -descriptors k=v,k2=v2
require('../dist/src/node-check.js').requireSupportedNode('ratelimit-client');
require('../dist/src/cli/client.js')
  .runClient(process.argv.slice(2), process.stdout, process.stderr)
  .then((code) => process.exit(code));
