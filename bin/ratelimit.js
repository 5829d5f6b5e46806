#!/usr/bin/env node
// The rate limit service. Settings come from the environment (see README.md).
require('../dist/src/node-check.js').requireSupportedNode('ratelimit');
require('../dist/src/main.js').runFromCommandLine();
