// ElastiCache IAM tokens as the AWS SDK's own presigner makes them, to check the service's.
import { formatUrl } from '@aws-sdk/util-format-url';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity } from '@smithy/types';
import type { RedisIamSettings } from '../../src/settings';

/** The presigned GET http://<cache>/?Action=connect&User=<user>, without its scheme. */
export async function sdkToken(
  iam: RedisIamSettings,
  credentials: AwsCredentialIdentity,
  atMs: number,
): Promise<string> {
  const signer = new SignatureV4({
    service: 'elasticache',
    region: iam.region ?? 'us-east-1',
    credentials,
    sha256: Hash.bind(null, 'sha256'),
  });
  const query: Record<string, string> = { Action: 'connect', User: iam.userId };
  if (iam.serverless) query.ResourceType = 'ServerlessCache';
  const presigned = await signer.presign(
    {
      method: 'GET',
      protocol: 'http:',
      hostname: iam.cacheName,
      path: '/',
      query,
      headers: { host: iam.cacheName },
    },
    { expiresIn: 900, signingDate: new Date(atMs) },
  );
  return formatUrl(presigned).replace('http://', '');
}
