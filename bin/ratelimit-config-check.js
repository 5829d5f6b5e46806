#!/usr/bin/env node
// Checks a directory of configuration files: ratelimit-config-check -config_dir DIR
require('../dist/src/node-check.js').requireSupportedNode('ratelimit-config-check');
require('../dist/src/cli/config-check.js')
  .runConfigCheck(process.argv.slice(2), process.stdout, process.stderr)
  .then((code) => process.exit(code));
