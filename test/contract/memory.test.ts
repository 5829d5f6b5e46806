// The counter store and decision suites on the memory backend, plus what only memory does.
// Needs no server, so it runs in the unit project.
import { behindPromises, memoryFixture } from '../helpers/stores';
import { algorithmStoreBehaviour } from './algorithm-store-behaviour';
import { counterStoreBehaviour } from './counter-store-behaviour';
import { decisionBehaviour } from './decision-behaviour';

counterStoreBehaviour('memory', () => Promise.resolve(memoryFixture()));
algorithmStoreBehaviour('memory', () => Promise.resolve(memoryFixture()));
// The memory store answers in the calling turn; behind promises, the engine's other path.
decisionBehaviour('memory', (clock) => Promise.resolve(memoryFixture(clock)));
decisionBehaviour('memory, answering by promise', (clock) =>
  Promise.resolve(behindPromises(memoryFixture(clock))),
);

describe('memory counter store', () => {
  it('forgets a key when its expiry passes and drops it from memory on sweep', async () => {
    const f = memoryFixture();
    await f.store.increment([
      { key: 'k', hits: 3, ttlSeconds: 2, isPerSecond: false, isNegative: false },
    ]);
    f.clock.advance(1999);
    expect(await f.store.read([{ key: 'k', isPerSecond: false }])).toEqual([3]);
    f.clock.advance(1);
    expect(await f.store.read([{ key: 'k', isPerSecond: false }])).toEqual([0]);
    await f.store.increment([
      { key: 'old', hits: 1, ttlSeconds: 1, isPerSecond: false, isNegative: false },
    ]);
    f.clock.advance(5000);
    const store = f.store as unknown as { sweep(): void; size: number };
    store.sweep();
    expect(store.size).toBe(0);
    await f.close();
  });
});
