// The decision suite on a real redis-server (backends project: needs redis-server).
import { RedisServer } from '../../helpers/redis-server';
import { redisFixture } from '../../helpers/stores';
import { decisionBehaviour } from '../decision-behaviour';

let redis: RedisServer;

beforeAll(async () => {
  redis = await RedisServer.start();
});

afterAll(async () => {
  await redis.destroy();
});

decisionBehaviour('redis', () => redisFixture(redis));
