// The AWS SDK's default credential chain and region resolution, for IAM-authenticated instances.
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import {
  loadConfig,
  NODE_REGION_CONFIG_FILE_OPTIONS,
  NODE_REGION_CONFIG_OPTIONS,
} from '@smithy/core/config';
import type { AwsCredentialIdentityProvider } from '@smithy/types';

/** Where IAM tokens get their signing identity; tests give static credentials instead. */
export interface AwsIdentity {
  readonly credentials: AwsCredentialIdentityProvider;
  /** The region when the setting leaves it empty; rejects when none can be found. */
  region(): Promise<string>;
}

/**
 * The chain every AWS SDK client uses (environment, SSO, web identity as on EKS, shared files,
 * ECS and EC2 metadata), memoized: credentials are fetched once and again shortly before they
 * expire, so asking for them on every connection costs nothing.
 */
export function defaultAwsIdentity(): AwsIdentity {
  return {
    credentials: defaultProvider(),
    // AWS_REGION, then the profile's region in the shared config file, as SDK clients do.
    region: loadConfig(NODE_REGION_CONFIG_OPTIONS, NODE_REGION_CONFIG_FILE_OPTIONS),
  };
}
