// ElastiCache IAM tokens: the SDK's own presigning and SigV4 by hand agree with the provider,
// with static credentials and a frozen clock; reuse, refresh before expiry and on rotation.
import { createHash, createHmac } from 'node:crypto';
import type { AwsCredentialIdentity } from '@smithy/types';
import { ManualClock } from '../../../src/lib/clock';
import type { RedisIamSettings } from '../../../src/settings';
import { IamTokenProvider } from '../../../src/store/redis/iam-token';
import { sdkToken } from '../../helpers/iam';

// AWS's documentation example key pair: static test credentials, valid nowhere.
const CREDENTIALS: AwsCredentialIdentity = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};
const START_MS = Date.UTC(2026, 0, 15, 8, 30, 0);
const IAM: RedisIamSettings = {
  cacheName: 'rate-limits',
  userId: 'limiter',
  serverless: false,
  region: 'eu-west-1',
};

function provider(
  credentials: () => AwsCredentialIdentity,
  clock: ManualClock,
  iam: RedisIamSettings = IAM,
): IamTokenProvider {
  return new IamTokenProvider({
    iam,
    region: iam.region ?? 'us-east-1',
    credentials: () => Promise.resolve(credentials()),
    clock,
  });
}

/** SigV4 query-string presigning written out from the published algorithm, with node:crypto. */
function handToken(credentials: AwsCredentialIdentity, atMs: number): string {
  const amzDate = new Date(atMs)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const date = amzDate.slice(0, 8);
  const scope = `${date}/${IAM.region ?? ''}/elasticache/aws4_request`;
  const params: Record<string, string> = {
    Action: 'connect',
    User: IAM.userId,
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Credential': `${credentials.accessKeyId}/${scope}`,
    'X-Amz-Date': amzDate,
    'X-Amz-Expires': '900',
    'X-Amz-SignedHeaders': 'host',
  };
  if (credentials.sessionToken !== undefined)
    params['X-Amz-Security-Token'] = credentials.sessionToken;
  const encode = (s: string): string =>
    encodeURIComponent(s).replace(
      /[!'()*]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
    );
  const query = (p: Record<string, string>): string =>
    Object.keys(p)
      .sort()
      .map((k) => `${encode(k)}=${encode(p[k] ?? '')}`)
      .join('&');
  const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
  const canonical = [
    'GET',
    '/',
    query(params),
    `host:${IAM.cacheName}`,
    '',
    'host',
    sha256(''),
  ].join('\n');
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const hmac = (key: string | Buffer, data: string): Buffer =>
    createHmac('sha256', key).update(data).digest();
  let key = hmac(`AWS4${credentials.secretAccessKey}`, date);
  for (const part of [IAM.region ?? '', 'elasticache', 'aws4_request']) key = hmac(key, part);
  const signature = hmac(key, toSign).toString('hex');
  return `${IAM.cacheName}/?${query({ ...params, 'X-Amz-Signature': signature })}`;
}

describe('the token', () => {
  it('is what the SDK presigns for GET http://<cache>/?Action=connect&User=<user>', async () => {
    const clock = new ManualClock(START_MS);
    const token = await provider(() => CREDENTIALS, clock).token();
    expect(token).toBe(await sdkToken(IAM, CREDENTIALS, START_MS));
    expect(token).toMatch(
      /^rate-limits\/\?Action=connect&User=limiter&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20260115%2Feu-west-1%2Felasticache%2Faws4_request&X-Amz-Date=20260115T083000Z&X-Amz-Expires=900&X-Amz-Signature=[0-9a-f]{64}&X-Amz-SignedHeaders=host$/,
    );
  });

  it('is SigV4 as published, session token included', async () => {
    const session = { ...CREDENTIALS, sessionToken: 'FwoGZXIvYXdzEXAMPLE/session+token=' };
    const clock = new ManualClock(START_MS);
    expect(await provider(() => CREDENTIALS, clock).token()).toBe(handToken(CREDENTIALS, START_MS));
    expect(await provider(() => session, clock).token()).toBe(handToken(session, START_MS));
  });

  it('names the resource type of a serverless cache', async () => {
    const serverless = { ...IAM, serverless: true };
    const token = await provider(() => CREDENTIALS, new ManualClock(START_MS), serverless).token();
    expect(token).toContain('&ResourceType=ServerlessCache&');
    expect(token).toBe(await sdkToken(serverless, CREDENTIALS, START_MS));
  });
});

describe('reuse and refresh', () => {
  it('reuses a token while more than 5 of its 15 minutes are left, then signs anew', async () => {
    const clock = new ManualClock(START_MS);
    const p = provider(() => CREDENTIALS, clock);
    const first = await p.token();
    clock.advance(10 * 60_000 - 1);
    expect(await p.token()).toBe(first);
    clock.advance(1);
    const second = await p.token();
    expect(second).not.toBe(first);
    expect(second).toBe(await sdkToken(IAM, CREDENTIALS, START_MS + 10 * 60_000));
  });

  it('signs anew as soon as the credential chain hands out rotated credentials', async () => {
    const clock = new ManualClock(START_MS);
    let current = CREDENTIALS;
    const p = provider(() => current, clock);
    const first = await p.token();
    current = { ...CREDENTIALS, accessKeyId: 'AKIAI44QH8DHBEXAMPLE' };
    clock.advance(1000);
    const rotated = await p.token();
    expect(rotated).not.toBe(first);
    expect(rotated).toBe(await sdkToken(IAM, current, START_MS + 1000));
  });

  it('stops reusing a token whose credentials expire within 5 minutes', async () => {
    const clock = new ManualClock(START_MS);
    const expiring = { ...CREDENTIALS, expiration: new Date(START_MS + 8 * 60_000) };
    const p = provider(() => expiring, clock);
    const first = await p.token();
    clock.advance(2 * 60_000);
    expect(await p.token()).toBe(first);
    clock.advance(60_000 + 1);
    expect(await p.token()).not.toBe(first);
  });

  it('hands concurrent askers one token', async () => {
    let asked = 0;
    const p = provider(() => {
      asked += 1;
      return CREDENTIALS;
    }, new ManualClock(START_MS));
    const tokens = await Promise.all([p.token(), p.token(), p.token()]);
    expect(new Set(tokens).size).toBe(1);
    expect(asked).toBe(3);
  });
});
