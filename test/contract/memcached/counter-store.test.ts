// The counter store suite on two real memcached servers (backends project: needs memcached).
import { MemcachedServer } from '../../helpers/memcached-server';
import { memcachedFixture } from '../../helpers/stores';
import { algorithmStoreBehaviour } from '../algorithm-store-behaviour';
import { counterStoreBehaviour } from '../counter-store-behaviour';

let servers: MemcachedServer[] = [];

beforeAll(async () => {
  servers = await Promise.all([MemcachedServer.start(), MemcachedServer.start()]);
});

afterAll(async () => {
  for (const server of servers) await server.stop();
});

counterStoreBehaviour('memcached (two servers)', () => memcachedFixture(servers));
algorithmStoreBehaviour('memcached (two servers)', () => memcachedFixture(servers));
