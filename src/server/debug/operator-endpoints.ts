// JSON endpoints for operators and the status page: loaded rules, health with times, and the
// last over-limit decisions. /counters is in counters-endpoint.ts.
import type { XdsStatus } from '../../stats';
import { describeLimit, type RecentDecision } from '../../engine';
import { SERVICE_NAME, SERVICE_VERSION } from '../../lib/version';
import { isoTime, sendError, sendJson, type DebugSources, type Endpoint } from './endpoint';
import { descriptorText, entriesJson, limitJson, listingJson } from './rule-json';

/** The xDS client's status, times as ISO 8601. */
function xdsJson(status: XdsStatus) {
  const { lastAck, lastNack } = status;
  return {
    server: status.server,
    connected: status.isConnected,
    acks: status.acks,
    nacks: status.nacks,
    lastAck: lastAck === undefined ? null : { version: lastAck.version, at: isoTime(lastAck.atMs) },
    lastNack:
      lastNack === undefined
        ? null
        : { version: lastNack.version, at: isoTime(lastNack.atMs), reason: lastNack.reason },
  };
}

function rules(sources: DebugSources): Endpoint {
  return {
    path: '/rules',
    help: 'JSON: the loaded rules with their limits, flags and source, and the last refused update',
    handle: (_req, res) => {
      const snapshot = sources.engine.currentSnapshot;
      const load = sources.config.current;
      const refusal = sources.config.lastRefused;
      sendJson(res, 200, {
        loaded: snapshot !== undefined,
        loadedAt: load === undefined ? null : isoTime(load.atMs),
        origin: load?.origin ?? null,
        domains: snapshot?.domains ?? [],
        rules: (snapshot?.rules() ?? []).map((r) => listingJson(r, load?.origin)),
        lastRefused:
          refusal === undefined ? null : { at: isoTime(refusal.atMs), errors: refusal.errors },
      });
    },
  };
}

function health(sources: DebugSources): Endpoint {
  return {
    path: '/health',
    help: 'JSON: overall health, each component and each backend breaker, with the time it last changed, and the xDS client',
    handle: (_req, res) => {
      const report = sources.health.report();
      const xds = sources.config.xdsState;
      sendJson(res, report.isHealthy ? 200 : 503, {
        service: SERVICE_NAME,
        version: SERVICE_VERSION,
        healthy: report.isHealthy,
        since: isoTime(report.sinceMs),
        components: report.components.map((c) => ({
          name: c.name,
          healthy: c.isHealthy,
          since: isoTime(c.sinceMs),
          affectsHealth: c.affectsHealth,
        })),
        breakers: report.breakers.map((b) => ({
          instance: b.instance,
          state: b.state,
          since: isoTime(b.sinceMs),
        })),
        xds: xds === undefined ? null : xdsJson(xds),
      });
    },
  };
}

function decisionJson(d: RecentDecision) {
  return {
    seq: d.seq,
    time: isoTime(d.atMs),
    domain: d.domain,
    descriptor: entriesJson(d.entries),
    descriptorText: descriptorText(d.entries),
    rule: d.limit.rule.statKey,
    // The limit that refused, of the rule's one or several.
    ...limitJson(describeLimit(d.ruleLimit)),
    hits: d.hits,
    remaining: d.remaining,
    shadow: d.isShadow,
    fromLocalCache: d.isFromLocalCache,
  };
}

/** A whole number of at least 0 from the query, the fallback when absent, or undefined. */
function wholeNumber(params: URLSearchParams, name: string, fallback: number): number | undefined {
  const text = params.get(name);
  if (text === null) return fallback;
  const value = Number(text);
  return /^\d+$/.test(text) && Number.isSafeInteger(value) ? value : undefined;
}

function recentDecisions(sources: DebugSources): Endpoint {
  return {
    path: '/decisions/recent',
    help: 'JSON: the last over-limit and shadow-mode decisions, newest first (?after=SEQ&limit=N)',
    handle: (_req, res, url) => {
      for (const name of url.searchParams.keys()) {
        if (name !== 'after' && name !== 'limit') {
          sendError(res, 400, `unknown parameter ${JSON.stringify(name)}; takes after and limit`);
          return;
        }
      }
      const after = wholeNumber(url.searchParams, 'after', 0);
      const limit = wholeNumber(url.searchParams, 'limit', Number.MAX_SAFE_INTEGER);
      if (after === undefined || limit === undefined || limit === 0) {
        sendError(res, 400, 'after must be a whole number of at least 0, limit of at least 1');
        return;
      }
      const ring = sources.engine.recentDecisions;
      sendJson(res, 200, {
        enabled: ring !== undefined,
        capacity: ring?.capacity ?? 0,
        total: ring?.total ?? 0,
        decisions: (ring?.newestFirst(after, limit) ?? []).map(decisionJson),
      });
    },
  };
}

export function operatorEndpoints(sources: DebugSources): Endpoint[] {
  return [rules(sources), health(sources), recentDecisions(sources)];
}
