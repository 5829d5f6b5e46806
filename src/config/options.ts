// What compiling a configuration is told: the settings that shape it and where its statistics go.
import type { RuleStatsFactory } from '../stats';
import type { BackendCapabilities } from './limits';

/** What checking needs: plain data, so that it can run on another thread. */
export interface CheckOptions {
  /** MERGE_DOMAIN_CONFIG: several documents may add to one domain. */
  readonly mergeDomainConfig: boolean;
  /** SANITIZE_DESCRIPTOR_METRIC_DOTS. */
  readonly sanitizeDots: boolean;
  /** What the backend in use cannot run; rules needing it are refused. Unchecked when absent. */
  readonly backend?: BackendCapabilities;
}

export interface CompileOptions extends CheckOptions {
  readonly stats: RuleStatsFactory;
}
