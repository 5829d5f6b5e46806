// The decision suite on two real memcached servers (backends project: needs memcached).
import { MemcachedServer } from '../../helpers/memcached-server';
import { memcachedFixture } from '../../helpers/stores';
import { decisionBehaviour } from '../decision-behaviour';

let servers: MemcachedServer[] = [];

beforeAll(async () => {
  servers = await Promise.all([MemcachedServer.start(), MemcachedServer.start()]);
});

afterAll(async () => {
  for (const server of servers) await server.stop();
});

decisionBehaviour('memcached (two servers)', () => memcachedFixture(servers));
