// Two projects so the fast unit and contract suites can run alone (`npm run test:unit`);
// `npm test` runs both.
// ts-jest only transpiles (tsconfig has isolatedModules): `npm run lint` type-checks everything.
// It is pure JavaScript, unlike swc, whose platform binaries the registry here does not all have.
const transform = { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] };

module.exports = {
  // Integration suites start real processes; unit suites finish in milliseconds anyway.
  testTimeout: 60000,
  projects: [
    {
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/test/contract/**/*.test.ts'],
      transform,
      testEnvironment: 'node',
    },
    {
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      transform,
      testEnvironment: 'node',
    },
  ],
};
