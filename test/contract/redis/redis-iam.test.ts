// AWS IAM authentication against a real TLS redis-server standing in for ElastiCache: an ACL user
// whose password is the token the AWS SDK's presigner makes for the same static credentials and
// frozen clock. A server-side close (ElastiCache's 12-hour one) is followed by a reconnection
// with a fresh token, and rotated credentials sign a new one.
import type { AwsCredentialIdentity } from '@smithy/types';
import { ManualClock } from '../../../src/lib/clock';
import type { RedisIamSettings } from '../../../src/settings';
import type { AwsIdentity, CounterStore } from '../../../src/store';
import { collectCleanups } from '../../helpers/cleanups';
import { eventually } from '../../helpers/eventually';
import { sdkToken } from '../../helpers/iam';
import { TlsRedis, tlsEnv } from '../../helpers/redis-tls';
import { openRedisFixture, type StoreFixture } from '../../helpers/stores';

const cleanup = collectCleanups();
const START_MS = Date.UTC(2026, 0, 15, 8, 30, 0);
const IAM: RedisIamSettings = {
  cacheName: 'rate-limits',
  userId: `limiter${process.pid}`,
  serverless: false,
  region: 'eu-west-1',
};
const FIRST: AwsCredentialIdentity = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};
const ROTATED: AwsCredentialIdentity = {
  accessKeyId: 'AKIAI44QH8DHBEXAMPLE',
  secretAccessKey: 'je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY',
};

let server: TlsRedis;
let fixture: StoreFixture;
const clock = new ManualClock(START_MS);
let credentials = FIRST;

beforeAll(async () => {
  server = await TlsRedis.start();
  cleanup(() => server.destroy());
  await allowOnly(await sdkToken(IAM, FIRST, START_MS));
  // The region comes from the SDK's resolution here, as when REDIS_AWS_IAM_REGION is empty.
  const identity: AwsIdentity = {
    credentials: () => Promise.resolve(credentials),
    region: () => Promise.resolve(IAM.region ?? ''),
  };
  fixture = await openRedisFixture(
    'iam',
    {
      REDIS_URL: `127.0.0.1:${server.port}`,
      ...tlsEnv('REDIS_', server.certs),
      REDIS_AWS_IAM_AUTH: 'true',
      REDIS_AWS_IAM_CACHE_NAME: IAM.cacheName,
      REDIS_AWS_IAM_USER_ID: IAM.userId,
    },
    [server.node.client()],
    { awsIdentity: identity, clock },
  );
  cleanup(() => fixture.close());
});

/** The ACL user accepts this token and no other. */
async function allowOnly(token: string): Promise<void> {
  await server.node.command(
    'ACL',
    'SETUSER',
    IAM.userId,
    'on',
    'resetpass',
    `>${token}`,
    '~*',
    '+@all',
  );
}

/** Closes the user's connections from the server side, as ElastiCache does after 12 hours. */
async function serverCloses(): Promise<void> {
  await server.node.command('CLIENT', 'KILL', 'USER', IAM.userId);
}

async function counts(store: CounterStore, key: string): Promise<number | undefined> {
  const [value] = await store.increment([
    { key, hits: 1, ttlSeconds: 60, isPerSecond: false, isNegative: false },
  ]);
  return value;
}

async function connectedAs(): Promise<string[]> {
  const list = String(await server.node.command('CLIENT', 'LIST'));
  return [...list.matchAll(/ user=(\S+)/g)].map((m) => m[1] ?? '');
}

it('authenticates as the IAM user with the token the SDK signs', async () => {
  expect(await counts(fixture.store, `iam_${process.pid}_a`)).toBe(1);
  expect(await connectedAs()).toContain(IAM.userId);
});

it('reconnects with a fresh token after the server closes the connection', async () => {
  // 11 minutes on, the first token has less than 5 minutes left: the next connection needs a
  // new one, and the server now accepts only that one.
  clock.advance(11 * 60_000);
  await allowOnly(await sdkToken(IAM, FIRST, START_MS + 11 * 60_000));
  await serverCloses();
  await eventually(
    async () => (await counts(fixture.store, `iam_${process.pid}_b`)) !== undefined,
    {
      what: 'the store to reconnect with a fresh token',
    },
  );
  expect(await connectedAs()).toContain(IAM.userId);
});

it('signs with rotated credentials as soon as the chain hands them out', async () => {
  credentials = ROTATED;
  clock.advance(1000);
  await allowOnly(await sdkToken(IAM, ROTATED, clock.nowMs()));
  await serverCloses();
  await eventually(
    async () => (await counts(fixture.store, `iam_${process.pid}_c`)) !== undefined,
    {
      what: 'the store to reconnect with a token from the rotated credentials',
    },
  );
});
