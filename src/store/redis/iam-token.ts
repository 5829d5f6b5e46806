// ElastiCache IAM connect tokens: SigV4-presigned requests signed locally, reused while fresh.
import { formatUrl } from '@aws-sdk/util-format-url';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import type { Clock } from '../../lib/clock';
import type { RedisIamSettings } from '../../settings';

/** How long ElastiCache accepts a token after it was signed. */
export const TOKEN_LIFETIME_SECONDS = 900;

/**
 * A token is replaced once it is this close to its end (or its credentials to theirs), so a
 * connection opened at any moment presents a token with minutes left.
 */
export const REFRESH_BEFORE_EXPIRY_MS = 5 * 60_000;

export interface IamTokenOptions {
  readonly iam: RedisIamSettings;
  /** The region the cache is in (REDIS_AWS_IAM_REGION, or the SDK's own resolution). */
  readonly region: string;
  /** The AWS credential chain; called for every token asked, so it must memoize. */
  readonly credentials: AwsCredentialIdentityProvider;
  readonly clock: Clock;
}

interface SignedToken {
  readonly token: string;
  readonly credentials: AwsCredentialIdentity;
  /** The earlier of the token's end and its credentials' end. */
  readonly validUntilMs: number;
}

function sameCredentials(a: AwsCredentialIdentity, b: AwsCredentialIdentity): boolean {
  return (
    a.accessKeyId === b.accessKeyId &&
    a.secretAccessKey === b.secretAccessKey &&
    a.sessionToken === b.sessionToken
  );
}

/**
 * Signs `GET http://<cache name>/?Action=connect&User=<user id>[&ResourceType=ServerlessCache]`
 * for the elasticache service and hands out the presigned URL without its scheme: the AUTH
 * password ElastiCache expects. One token serves every connection until it comes within
 * REFRESH_BEFORE_EXPIRY_MS of its end or of its credentials' expiry, or the credential chain
 * hands out different credentials (rotation): then the next request signs a new one.
 */
export class IamTokenProvider {
  private current: SignedToken | undefined;
  private signing: Promise<SignedToken> | undefined;

  constructor(private readonly options: IamTokenOptions) {}

  /** The AUTH user name: ElastiCache IAM users have user name = user ID. */
  get username(): string {
    return this.options.iam.userId;
  }

  /** A token valid for at least REFRESH_BEFORE_EXPIRY_MS more. Rejects when credentials fail. */
  async token(): Promise<string> {
    const credentials = await this.options.credentials();
    const now = this.options.clock.nowMs();
    const current = this.current;
    if (
      current !== undefined &&
      sameCredentials(current.credentials, credentials) &&
      current.validUntilMs - now > REFRESH_BEFORE_EXPIRY_MS
    ) {
      return current.token;
    }
    // Concurrent callers share one signature.
    this.signing ??= this.sign(credentials, now).finally(() => {
      this.signing = undefined;
    });
    const signed = await this.signing;
    this.current = signed;
    return signed.token;
  }

  private async sign(credentials: AwsCredentialIdentity, nowMs: number): Promise<SignedToken> {
    const { iam, region } = this.options;
    const signer = new SignatureV4({
      service: 'elasticache',
      region,
      credentials,
      sha256: Hash.bind(null, 'sha256'),
    });
    const presigned = await signer.presign(
      {
        method: 'GET',
        protocol: 'http:',
        hostname: iam.cacheName,
        path: '/',
        query: {
          Action: 'connect',
          User: iam.userId,
          ...(iam.serverless ? { ResourceType: 'ServerlessCache' } : {}),
        },
        headers: { host: iam.cacheName },
      },
      { expiresIn: TOKEN_LIFETIME_SECONDS, signingDate: new Date(nowMs) },
    );
    const expiresAtMs = credentials.expiration?.getTime() ?? Number.POSITIVE_INFINITY;
    return {
      token: formatUrl(presigned).replace(/^http:\/\//, ''),
      credentials,
      validUntilMs: Math.min(nowMs + TOKEN_LIFETIME_SECONDS * 1000, expiresAtMs),
    };
  }
}
