// The decision scenario table, run through the engine against every counter store.
import { RedisServer } from '../helpers/redis-server';
import { memoryFixture, redisFixture } from '../helpers/stores';
import { describeDecisionScenarios, describeKeyExpiry, type MakeFixture } from './scenario-runner';

let redis: RedisServer;

beforeAll(async () => {
  redis = await RedisServer.start();
});

afterAll(async () => {
  await redis.destroy();
});

const backends: [string, MakeFixture][] = [
  ['memory', (clock) => Promise.resolve(memoryFixture(clock))],
  ['redis', () => redisFixture(redis)],
];

describe.each(backends)('decisions on the %s backend', (_backend, make) => {
  describeDecisionScenarios(make);
});

describe.each(backends)('key expiry on the %s backend', (_backend, make) => {
  describeKeyExpiry(make);
});
