// What BatchCommand relies on in ioredis beyond its documented API, one test per behaviour, so an
// upgrade of the pinned version fails here, naming what changed, before the batch path breaks.
import { Cluster, Command, Redis } from 'ioredis';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { IOREDIS_REJECTIONS, IOREDIS_TIMEOUT } from '../../../src/store/redis/failures';
import { eventually } from '../../helpers/eventually';
import { RedisServer } from '../../helpers/redis-server';

type QueueItem = NonNullable<ReturnType<Redis['commandQueue']['peekBack']>>;

/**
 * A Command that records what ioredis does with it instead of settling a promise. Written as
 * `expected` commands, it puts its queue entry back after each reply but the last, as
 * BatchCommand does.
 */
class Probe extends Command {
  readonly replies: unknown[] = [];
  readonly errors: Error[] = [];
  readonly timeouts: number[] = [];
  writes = 0;
  private item: QueueItem | undefined;

  constructor(
    private readonly client: Redis,
    private readonly text: string,
    private readonly expected = 1,
  ) {
    super('get', []);
    this.resolve = (value: unknown): void => {
      this.replies.push(value);
      if (this.replies.length < this.expected && this.item !== undefined)
        this.client.commandQueue.unshift(this.item);
    };
    this.reject = (err: Error): void => {
      this.errors.push(err);
    };
  }

  override toWritable(): string {
    this.writes += 1;
    return this.text;
  }

  override setTimeout(ms: number): void {
    this.timeouts.push(ms);
  }

  send(): void {
    void this.client.sendCommand(this);
    this.item = this.client.commandQueue.peekBack();
  }
}

const ping = '*1\r\n$4\r\nPING\r\n';
let redis: RedisServer;
let client: Redis;

beforeAll(async () => {
  redis = await RedisServer.start();
  client = redis.client({ commandTimeout: 1234 });
  await client.ping();
});

afterAll(async () => {
  client.disconnect();
  await redis.destroy();
});

/** Resolves once `probe` holds `count` answers (replies and errors). */
async function answered(probe: Probe, count: number): Promise<void> {
  await eventually(() => probe.replies.length + probe.errors.length >= count, {
    timeoutMs: 5000,
    what: `${count} answers to the probe`,
  });
}

it('is the exact version package.json pins (batch-command.ts was written against it)', () => {
  const root = path.join(__dirname, '..', '..', '..');
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const installed = JSON.parse(readFileSync(require.resolve('ioredis/package.json'), 'utf8')) as {
    version: string;
  };
  expect(pkg.dependencies.ioredis).toMatch(/^\d+\.\d+\.\d+$/);
  expect(installed.version).toBe(pkg.dependencies.ioredis);
});

it('exports Command, whose resolve and reject a subclass may replace', async () => {
  const probe = new Probe(client, ping);
  probe.send();
  await answered(probe, 1);
  expect({ replies: probe.replies.map(String), errors: probe.errors }).toEqual({
    replies: ['PONG'],
    errors: [],
  });
});

it('pushes the command at the back of commandQueue synchronously, as an entry naming it', async () => {
  const probe = new Probe(client, ping);
  probe.send();
  expect(client.commandQueue.peekBack()?.command).toBe(probe);
  await answered(probe, 1);
});

it('writes toWritable() once, whatever protocol text it returns', async () => {
  const probe = new Probe(client, ping + ping + ping, 3);
  probe.send();
  await answered(probe, 3);
  expect(probe.writes).toBe(1);
});

it('gives each reply to the entry it shifts off the queue, so one put back takes the next', async () => {
  const probe = new Probe(client, `${ping}*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n`, 2);
  probe.send();
  await answered(probe, 2);
  expect(probe.replies.map(String)).toEqual(['PONG', 'hi']);
  // The queue stayed in step: the next command gets its own reply.
  await expect(client.echo('after')).resolves.toBe('after');
});

it('passes the reply to resolve() as the parser gave it: bulk strings as Buffers', async () => {
  await client.set('ioredis_behaviour_bulk', 'été');
  const probe = new Probe(client, '*2\r\n$3\r\nGET\r\n$22\r\nioredis_behaviour_bulk\r\n');
  probe.send();
  await answered(probe, 1);
  expect(probe.replies).toEqual([Buffer.from('été')]);
});

it('rejects an error reply alone, with an error named ReplyError', async () => {
  const probe = new Probe(client, '*3\r\n$6\r\nINCRBY\r\n$1\r\nk\r\n$3\r\nNaN\r\n');
  probe.send();
  await answered(probe, 1);
  expect(probe.errors.map((e) => e.name)).toEqual(['ReplyError']);
  await expect(client.ping()).resolves.toBe('PONG');
});

it('arms the command timeout through setTimeout(commandTimeout)', async () => {
  const probe = new Probe(client, ping);
  probe.send();
  expect(probe.timeouts).toEqual([1234]);
  await answered(probe, 1);
});

it('rejects at once, before queueing, when the stream is not writable and the offline queue is off', () => {
  const offline = new Redis({
    host: '127.0.0.1',
    port: redis.port,
    lazyConnect: true,
    enableOfflineQueue: false,
  });
  try {
    const probe = new Probe(offline, ping);
    probe.send();
    expect(probe.errors.map((e) => e.name)).toEqual(['Error']);
    expect(offline.commandQueue.length).toBe(0);
    // The sentence failures.ts turns into the operator's words.
    expect(Object.keys(IOREDIS_REJECTIONS)).toContain(probe.errors[0]?.message);
  } finally {
    offline.disconnect();
  }
});

it('refuses a call sent after its socket ends, while its status still says ready', async () => {
  // ioredis changes its status on the socket's close event, which follows the end of the socket;
  // failures.ts counts such a refusal toward the outage though the status says connected.
  const lost = new Redis({
    host: '127.0.0.1',
    port: redis.port,
    lazyConnect: true,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  try {
    await lost.connect();
    lost.stream.destroy();
    const probe = new Probe(lost, ping);
    probe.send();
    expect(lost.status).toBe('ready');
    expect(probe.errors.map((e) => e.message)).toEqual([
      "Stream isn't writeable and enableOfflineQueue options is false",
    ]);
  } finally {
    lost.disconnect();
  }
});

it('rejects every queued command with an error not named ReplyError when the connection closes', async () => {
  const closing = redis.client();
  await closing.ping();
  // BLPOP holds the connection's replies, so the probe is still queued when it closes.
  void closing.blpop('ioredis_behaviour_never', 5).catch(() => undefined);
  const probe = new Probe(closing, ping);
  probe.send();
  closing.disconnect();
  await answered(probe, 1);
  expect(probe.replies).toEqual([]);
  expect(probe.errors.map((e) => e.name)).not.toContain('ReplyError');
  expect(Object.keys(IOREDIS_REJECTIONS)).toContain(probe.errors[0]?.message);
});

it('rejects a cluster call with the sentence failures.ts knows while the cluster is not ready', async () => {
  const cluster = new Cluster([{ host: '127.0.0.1', port: redis.port }], {
    lazyConnect: true,
    enableOfflineQueue: false,
    clusterRetryStrategy: () => null,
  });
  try {
    const err = await cluster.get('k').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(Object.keys(IOREDIS_REJECTIONS)).toContain((err as Error).message);
  } finally {
    cluster.disconnect();
  }
});

it('rejects a call past commandTimeout with the sentence failures.ts reads as a timeout', async () => {
  const blocker = redis.client();
  const slow = redis.client({ commandTimeout: 100 });
  try {
    await slow.ping();
    expect(await blocker.call('CLIENT', 'PAUSE', '500', 'WRITE')).toBe('OK');
    const err = await slow.incr('ioredis_behaviour_slow').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as Error).message).toBe(IOREDIS_TIMEOUT);
  } finally {
    await blocker.call('CLIENT', 'UNPAUSE');
    blocker.disconnect();
    slow.disconnect();
  }
});
