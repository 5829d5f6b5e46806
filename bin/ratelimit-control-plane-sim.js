#!/usr/bin/env node
// A development xDS management server: ratelimit-control-plane-sim -config_dir DIR [-port 18000]
require('../dist/src/node-check.js').requireSupportedNode('ratelimit-control-plane-sim');
require('../dist/control-plane-sim/src/main.js').main();
