// Import directions of STYLE.md: lib <- config, stats <- provider, store <- engine <- server <- main,
// and tracing (OpenTelemetry) beside them, wired by main alone: the server and the store know it
// only as types, so with tracing off nothing of it runs per call.
/** @type {import('dependency-cruiser').IConfiguration} */
const layer = (from, forbidden) => ({
  name: `${from}-imports`,
  severity: 'error',
  comment: `src/${from} may not import ${forbidden.join(', ')}`,
  from: { path: `^src/${from}/` },
  to: { path: `^src/(${forbidden.join('|')})/`, dependencyTypesNot: ['type-only'] },
});

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    layer('lib', [
      'settings',
      'config',
      'stats',
      'provider',
      'store',
      'engine',
      'server',
      'cli',
      'tracing',
    ]),
    layer('settings', [
      'config',
      'stats',
      'provider',
      'store',
      'engine',
      'server',
      'cli',
      'tracing',
    ]),
    layer('config', ['provider', 'store', 'engine', 'server', 'cli', 'tracing']),
    layer('stats', ['config', 'provider', 'store', 'engine', 'server', 'cli', 'tracing']),
    layer('provider', ['store', 'engine', 'server', 'cli', 'tracing']),
    layer('store', ['config', 'provider', 'engine', 'server', 'cli', 'tracing']),
    layer('engine', ['provider', 'server', 'cli', 'store', 'tracing']),
    layer('server', ['store', 'provider', 'cli', 'cluster', 'tracing']),
    layer('tracing', [
      'config',
      'stats',
      'provider',
      'store',
      'engine',
      'server',
      'cli',
      'cluster',
    ]),
    layer('cluster', ['config', 'provider', 'store', 'engine', 'cli', 'tracing']),
    layer('quota', ['config', 'provider', 'engine', 'server', 'cli', 'cluster', 'tracing']),
    {
      name: 'sim-imports-only-lib',
      severity: 'error',
      comment:
        'control-plane-sim shares api/ and src/lib (which imports nothing internal), never the service',
      from: { path: '^control-plane-sim/' },
      to: { path: '^src/', pathNot: '^src/lib/' },
    },
    {
      name: 'only-main-wires',
      severity: 'error',
      comment: 'nothing imports the composition root',
      from: { pathNot: '^src/(main|bin)' },
      to: { path: '^src/main\\.ts$' },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
  },
};
