// Import directions of docs/style.md: lib <- config, stats <- provider, store <- engine <- server <- main,
// and tracing (OpenTelemetry) beside them, wired by main alone: the server knows it only as types,
// so with tracing off nothing of it runs per call; the store wraps itself in spans when handed a
// tracer, so no front end reaches a store through tracing.
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
    {
      name: 'front-ends-reach-stores-through-the-engine',
      severity: 'error',
      comment:
        'src/server (and the tracing seam it sees) never imports a counter store, not even its types: the engine is the only way to one',
      from: { path: '^src/(server|tracing)/' },
      to: { path: ['^src/store/', 'traced-store'] },
    },
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
