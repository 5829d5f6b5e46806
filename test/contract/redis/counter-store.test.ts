// The counter store suite on a real redis-server (backends project: needs redis-server).
import { RedisServer } from '../../helpers/redis-server';
import { redisFixture } from '../../helpers/stores';
import { algorithmStoreBehaviour } from '../algorithm-store-behaviour';
import { counterStoreBehaviour } from '../counter-store-behaviour';

let redis: RedisServer;

beforeAll(async () => {
  redis = await RedisServer.start();
});

afterAll(async () => {
  await redis.destroy();
});

counterStoreBehaviour('redis', () => redisFixture(redis));
algorithmStoreBehaviour('redis', () => redisFixture(redis));
