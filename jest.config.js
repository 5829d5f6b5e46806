// Three projects. `unit` needs nothing but Node (`npm run test:unit`): unit suites and the
// contract suites on the memory backend. `backends` runs the contract suites against real
// servers (redis-server, memcached; `npm run test:backends`). `integration` starts the built
// service as a process (`npm run test:integration`). `npm test` runs all three; a suite whose
// server is missing fails, naming it, rather than being skipped.
// ts-jest only transpiles (tsconfig has isolatedModules): `npm run lint` type-checks everything.
// It is pure JavaScript, unlike swc, whose platform binaries the registry here does not all have.
const transform = { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] };
const setupFiles = ['<rootDir>/test/helpers/poison-reads.ts'];

module.exports = {
  // Integration suites start real processes; unit suites finish in milliseconds anyway.
  testTimeout: 60000,
  projects: [
    {
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/test/contract/*.test.ts'],
      transform,
      setupFiles,
      testEnvironment: 'node',
    },
    {
      displayName: 'backends',
      testMatch: ['<rootDir>/test/contract/*/**/*.test.ts'],
      transform,
      setupFiles,
      testEnvironment: 'node',
    },
    {
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      transform,
      setupFiles,
      testEnvironment: 'node',
    },
    {
      // The reliability rig (test/reliability/): short mode here; `npm run reliability -- --long`
      // runs the long mode by hand.
      displayName: 'reliability',
      testMatch: ['<rootDir>/test/reliability/**/*.test.ts'],
      transform,
      setupFiles,
      testEnvironment: 'node',
    },
  ],
};
