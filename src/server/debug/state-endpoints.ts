// Debug endpoints showing the service's state: loaded configuration, statistics, health.
import type http from 'node:http';
import type { ConfigSnapshot } from '../../config';
import type { QuotaRule } from '../../quota';
import type { StatsSnapshot } from '../../stats';
import { sendText, type DebugSources, type Endpoint } from './endpoint';

/**
 * `name: value` lines, sorted, as the reference prints them; `X-Ratelimit-Workers` says how
 * many workers' statistics they sum (1 without WORKERS).
 */
function sendStats(res: http.ServerResponse, { counters, gauges }: StatsSnapshot, workers: number) {
  const lines = [...counters, ...gauges]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}: ${value}\n`);
  res.setHeader('X-Ratelimit-Workers', String(workers));
  sendText(res, 200, lines.join(''));
}

/** A bucket rule's policy, its fields named as in `quota_buckets`. */
function policyText(policy: QuotaRule['policy']): string {
  if (policy.kind === 'blanket') return `blanket_rule: ${policy.rule}`;
  const unit = policy.unit.toUpperCase();
  return `unit=${unit} requests_per_unit=${policy.requestsPerUnit}, strategy: ${policy.strategy}, max_tokens: ${policy.maxTokens}`;
}

/**
 * The rules' lines as the reference prints them (unlimited rules too: `unit=UNKNOWN
 * requests_per_unit=0`, as its descriptor dump writes them), then one line per RLQS bucket rule,
 * which the reference does not have: `quota_bucket <domain> <bucket>: <policy>`.
 */
function dumpText(snapshot: ConfigSnapshot): string {
  const quota = snapshot.quotaRules;
  const buckets = quota
    .domains()
    .flatMap((domain) =>
      quota.rulesOf(domain).map((r) => `quota_bucket ${domain} ${r.id}: ${policyText(r.policy)}\n`),
    );
  return snapshot.dump() + buckets.join('');
}

function rlconfig(sources: DebugSources): Endpoint {
  return {
    path: '/rlconfig',
    help: 'print out the currently loaded configuration for debugging',
    handle: (_req, res) => {
      const snapshot = sources.engine.currentSnapshot;
      sendText(res, 200, snapshot === undefined ? '' : dumpText(snapshot));
    },
  };
}

function stats(sources: DebugSources): Endpoint {
  return {
    path: '/stats',
    help: 'print out stats',
    handle: (_req, res) => {
      const totals = sources.statsTotals;
      if (totals === undefined) {
        sendStats(res, sources.stats.snapshot(), 1);
        return;
      }
      // With WORKERS: every worker's, summed; this worker's alone if the supervisor is gone.
      totals().then(
        ({ snapshot, workers }) => {
          sendStats(res, snapshot, workers);
        },
        () => {
          sendStats(res, sources.stats.snapshot(), 1);
        },
      );
    },
  };
}

function healthComponents(sources: DebugSources): Endpoint {
  return {
    path: '/healthcheck/components',
    help: 'health of each component',
    handle: (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(sources.health.describe()));
    },
  };
}

export function stateEndpoints(sources: DebugSources): Endpoint[] {
  return [rlconfig(sources), stats(sources), healthComponents(sources)];
}
