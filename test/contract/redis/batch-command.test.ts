// What a finished batch command still holds: nothing of the requests it answered.
import type { Redis } from 'ioredis';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { BatchCommand, encodePlain } from '../../../src/store/redis/batch-command';
import type { Reply } from '../../../src/store/redis/ops';
import { RedisServer } from '../../helpers/redis-server';

// The garbage collector on demand, without restarting the test runner with --expose-gc.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

let redis: RedisServer;
let client: Redis;
const run = `${process.pid}_${Date.now()}`;

beforeAll(async () => {
  redis = await RedisServer.start();
  client = redis.client();
  // Sent before the connection is ready, a command waits in the offline queue instead.
  await client.ping();
});

afterAll(async () => {
  client.disconnect();
  await redis.destroy();
});

interface Delivered {
  readonly command: BatchCommand;
  /** The state the delivery callback closed over, as a request's continuation does. */
  readonly requestState: WeakRef<object>;
  readonly replies: WeakRef<object>;
}

/** Sends INCRBY + EXPIRE as one batch and waits for the delivery; keeps only weak references. */
async function sendBatch(key: string): Promise<Delivered> {
  const requestState = { key, note: 'what an awaiting request keeps' };
  let sent: BatchCommand | undefined;
  const outcome = new Promise<readonly Reply[] | Error>((resolve) => {
    const payload =
      encodePlain({ name: 'incrby', key, hits: 1 }) +
      encodePlain({ name: 'expire', key, ttlSeconds: 60 });
    const command = new BatchCommand(client, payload, 2, (result) => {
      if (requestState.key === key) resolve(result);
    });
    command.send();
    sent = command;
  });
  const replies = await outcome;
  expect(replies).toEqual([
    [null, 1],
    [null, 1],
  ]);
  if (sent === undefined) throw new Error('the command was not made');
  return {
    command: sent,
    requestState: new WeakRef(requestState),
    replies: new WeakRef(replies),
  };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

it('lets go of its callback and replies once it has delivered them', async () => {
  const delivered = await sendBatch(`release_${run}`);
  // WeakRef targets stay alive until the job that made or read them has ended.
  await nextTurn();
  collectGarbage();
  // The command itself is still reachable here, as it can be from the client's internals.
  expect(delivered.command).toBeInstanceOf(BatchCommand);
  expect(delivered.requestState.deref()).toBeUndefined();
  expect(delivered.replies.deref()).toBeUndefined();
});
