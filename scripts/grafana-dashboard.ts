// `npm run dashboard`: the Grafana dashboard of deploy/monitoring, built with Grafana's
// foundation SDK from the names the service's Prometheus endpoint exposes, written as JSON to
// deploy/monitoring/ and into the Helm chart (which can only read files inside itself).
/* eslint-disable @typescript-eslint/no-deprecated -- the SDK marks the classic dashboard model
   deprecated in favour of dashboardv2, the schema of Grafana 12's new dashboards behind a feature
   flag; the classic JSON is what every Grafana imports and what the dashboard sidecar loads. */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Builder, Dataquery } from '@grafana/grafana-foundation-sdk/cog';
import {
  DashboardBuilder,
  DatasourceVariableBuilder,
  QueryVariableBuilder,
  RowBuilder,
  ThresholdsConfigBuilder,
  ThresholdsMode,
  VariableRefresh,
  type Dashboard,
  type Panel,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as StatPanel } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as TimeseriesPanel } from '@grafana/grafana-foundation-sdk/timeseries';

/** The checkout: this file runs from scripts/ (tests) or dist/scripts/ (npm run dashboard). */
const ROOT =
  [path.resolve(__dirname, '..'), path.resolve(__dirname, '..', '..')].find((dir) =>
    existsSync(path.join(dir, 'package.json')),
  ) ?? path.resolve(__dirname, '..');
/** Where the JSON goes: the monitoring folder, and the chart's copy its ConfigMap reads. */
export const DASHBOARD_FILES = [
  path.join(ROOT, 'deploy', 'monitoring', 'ratelimit-dashboard.json'),
  path.join(ROOT, 'deploy', 'helm', 'ratelimit', 'monitoring', 'ratelimit-dashboard.json'),
];

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };
/** Every selector carries the dashboard's two filters. */
const SCOPE = 'job=~"$job", instance=~"$instance"';
const RATE = '$__rate_interval';

/** A selector of one metric, scoped, with more matchers if given. */
function m(name: string, matchers = ''): string {
  return `${name}{${SCOPE}${matchers === '' ? '' : `, ${matchers}`}}`;
}

/**
 * The per-second rate of counters the service names after a part (a backend, a domain and
 * rule, a cap, a reason): one metric per part, selected by a regex on the name. The part is
 * copied into `label` before the rate, which drops the name, so two metrics never collide.
 */
function partRate(prefix: string, suffix: string, label: string, exclude = ''): string {
  const pattern = `${prefix}(.+)${suffix}`;
  const notMatching = exclude === '' ? '' : `, __name__!~"${exclude}"`;
  return `sum by (${label}) (rate(label_replace({__name__=~"${pattern}"${notMatching}, ${SCOPE}}, "${label}", "$1", "__name__", "${pattern}")[${RATE}:]))`;
}

/** Names a domain called "refused" would make under ratelimit_rlqs_refused_, not caps. */
const NOT_RLQS_CAPS =
  'ratelimit_rlqs_refused_buckets_without_rule|.+_(reports|buckets_refused|streams_open|assignments_pushed|abandoned)';

function query(expr: string, legend: string): DataqueryBuilder {
  return new DataqueryBuilder().expr(expr).legendFormat(legend);
}

function timeseries(
  title: string,
  unit: string,
  targets: readonly Builder<Dataquery>[],
  description: string,
): TimeseriesPanel {
  const panel = new TimeseriesPanel()
    .title(title)
    .description(description)
    .unit(unit)
    .datasource(DATASOURCE)
    .height(8)
    .span(8);
  for (const target of targets) panel.withTarget(target);
  return panel;
}

function decisionsRow(d: DashboardBuilder): void {
  d.withRow(new RowBuilder('Decisions'))
    .withPanel(
      timeseries(
        'Decisions',
        'reqps',
        [
          ['within_limit', 'within the limit'],
          ['near_limit', 'near the limit'],
          ['over_limit', 'over the limit'],
          ['shadow_mode', 'over, let through (shadow mode)'],
        ].map(([stat = '', legend = '']) =>
          query(`sum(rate(${m(`ratelimit_service_rate_limit_${stat}`)}[${RATE}]))`, legend),
        ),
        'Descriptor hits by outcome, all domains (a call with two descriptors counts twice).',
      ),
    )
    .withPanel(
      timeseries(
        'Over-limit ratio by domain',
        'percentunit',
        [
          query(
            `sum by (domain) (rate(${m('ratelimit_service_rate_limit_over_limit')}[${RATE}])) / sum by (domain) (rate(${m('ratelimit_service_rate_limit_total_hits')}[${RATE}]))`,
            '{{domain}}',
          ),
        ],
        'The share of hits over the limit; the RateLimitOverLimitSurge alert fires past 25 % for 10 minutes.',
      ),
    )
    .withPanel(
      timeseries(
        'Calls by method',
        'reqps',
        [
          query(
            `sum by (grpc_method) (rate(${m('ratelimit_service_total_requests')}[${RATE}]))`,
            '{{grpc_method}}',
          ),
        ],
        'gRPC ShouldRateLimit calls and health Checks.',
      ),
    );
}

function latencyRow(d: DashboardBuilder): void {
  const bucket = `rate(${m('ratelimit_service_response_time_seconds_bucket', 'grpc_method="ShouldRateLimit"')}[${RATE}])`;
  d.withRow(new RowBuilder('Latency')).withPanel(
    timeseries(
      'ShouldRateLimit latency',
      's',
      [0.5, 0.99, 0.999].map((q) =>
        query(`histogram_quantile(${q}, sum by (le) (${bucket}))`, `p${q * 100}`),
      ),
      "Envoy's rate limit filter gives up after 20 ms by default (its `timeout`); the RateLimitLatencyNearEnvoyTimeout alert fires at a p99 past 15 ms.",
    )
      .thresholds(
        new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps([
          { value: null, color: 'green' },
          { value: 0.015, color: 'orange' },
          { value: 0.02, color: 'red' },
        ]),
      )
      .span(24),
  );
}

function backendRow(d: DashboardBuilder): void {
  d.withRow(new RowBuilder('Backend'))
    .withPanel(
      timeseries(
        'Call errors',
        'reqps',
        [
          query(
            `sum by (err_type) (rate(${m('ratelimit_service_should_rate_limit_error')}[${RATE}]))`,
            '{{err_type}}',
          ),
        ],
        'redis_error: the backend (any backend) failed; service_error: a request the service refused.',
      ),
    )
    .withPanel(
      timeseries(
        'Circuit breaker state',
        'short',
        [
          query(
            `max by (backend) (label_replace({__name__=~"ratelimit_circuit_breaker_(.+)_state", ${SCOPE}}, "backend", "$1", "__name__", "ratelimit_circuit_breaker_(.+)_state"))`,
            '{{backend}}',
          ),
        ],
        '0 closed, 1 open, 2 probing (BACKEND_FAILURE_THRESHOLD above 0).',
      ).max(2),
    )
    .withPanel(
      timeseries(
        'Breaker answers and openings',
        'reqps',
        [
          query(
            partRate('ratelimit_circuit_breaker_', '_answered_[a-z]+', 'backend'),
            'answered {{backend}}',
          ),
          query(partRate('ratelimit_circuit_breaker_', '_opened', 'backend'), 'opened {{backend}}'),
        ],
        'Calls the open breaker answered by BACKEND_FAILURE_MODE, and how often it opened.',
      ),
    );
}

function configRow(d: DashboardBuilder): void {
  d.withRow(new RowBuilder('Configuration'))
    .withPanel(
      timeseries(
        'Configuration loads and refusals',
        'short',
        [
          query(`sum(increase(${m('ratelimit_service_config_load_success')}[${RATE}]))`, 'loaded'),
          query(`sum(increase(${m('ratelimit_service_config_load_error')}[${RATE}]))`, 'refused'),
        ],
        'A refused update leaves the previous configuration serving; /rules on the debug listener shows why.',
      ),
    )
    .withPanel(
      timeseries(
        'xDS stream',
        'short',
        [query(`min(${m('ratelimit_xds_connected')})`, 'connected (all pods)')],
        'xDS mode: 1 while every pod holds a stream to the management server.',
      ).max(1),
    )
    .withPanel(
      timeseries(
        'xDS updates',
        'short',
        [
          query(`max(${m('ratelimit_xds_update_age_seconds')})`, 'age of the last update (s)'),
          query(`sum(rate(${m('ratelimit_xds_acks')}[${RATE}]))`, 'ACKs/s'),
          query(`sum(rate(${m('ratelimit_xds_nacks')}[${RATE}]))`, 'NACKs/s'),
        ],
        'xDS mode: seconds since the last update, and updates accepted and refused.',
      ),
    );
}

function rlqsRow(d: DashboardBuilder): void {
  d.withRow(new RowBuilder('Rate Limit Quota Service'))
    .withPanel(
      timeseries(
        'RLQS streams',
        'short',
        [query(`sum(${m('ratelimit_rlqs_streams_open')})`, 'open streams')],
        'Envoy RLQS streams open, all pods together.',
      ),
    )
    .withPanel(
      timeseries(
        'Assignments sent',
        'ops',
        [query(partRate('ratelimit_rlqs_', '_assignments_pushed', 'rule'), 'pushed {{rule}}')],
        'Assignments sent (first ones, pushes, refreshes), by domain and bucket rule.',
      ),
    )
    .withPanel(
      timeseries(
        'RLQS refusals',
        'ops',
        [
          query(partRate('ratelimit_rlqs_refused_', '', 'cap', NOT_RLQS_CAPS), 'cap {{cap}}'),
          query(
            partRate('ratelimit_rlqs_', '_buckets_refused', 'domain'),
            'buckets past RLQS_MAX_BUCKETS_PER_STREAM ({{domain}})',
          ),
          query(`sum(rate(${m('ratelimit_rlqs_usages_refused')}[${RATE}]))`, 'usages refused'),
          query(`sum(rate(${m('ratelimit_rlqs_invalid_reports')}[${RATE}]))`, 'invalid reports'),
        ],
        'Streams and buckets refused at the RLQS_MAX_* caps, and reports refused.',
      ),
    );
}

function processRow(d: DashboardBuilder): void {
  d.withRow(new RowBuilder('Process'))
    .withPanel(
      new StatPanel()
        .title('Version')
        .description('ratelimit_build_info, by pod.')
        .datasource(DATASOURCE)
        .withTarget(
          query(`count by (version) (${m('ratelimit_build_info')})`, '{{version}}').instant(),
        )
        .height(8)
        .span(4),
    )
    .withPanel(
      timeseries(
        'Refused connections and streams',
        'ops',
        [query(partRate('ratelimit_server_refused_', '', 'reason'), '{{reason}}')],
        'Connections and streams the listeners refused or cut: connection caps, deadlines, slow readers.',
      ).span(8),
    )
    .withPanel(
      timeseries(
        'CPU',
        'percentunit',
        [
          query(
            `sum by (instance) (rate(${m('process_cpu_seconds_total')}[${RATE}]))`,
            '{{instance}}',
          ),
        ],
        'CPU seconds per second, by pod (one worker saturates at 1).',
      ).span(6),
    )
    .withPanel(
      timeseries(
        'Memory',
        'bytes',
        [
          query(`sum by (instance) (${m('process_resident_memory_bytes')})`, 'RSS {{instance}}'),
          query(`sum by (instance) (${m('nodejs_heap_size_used_bytes')})`, 'heap {{instance}}'),
        ],
        'Resident memory and V8 heap in use, by pod.',
      ).span(6),
    );
  d.withPanel(
    timeseries(
      'Event loop lag p99',
      's',
      [query(`max by (instance) (${m('nodejs_eventloop_lag_p99_seconds')})`, '{{instance}}')],
      'A busy event loop delays every answer.',
    ).span(24),
  );
}

function variables(d: DashboardBuilder): void {
  d.withVariable(
    new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'),
  )
    .withVariable(
      new QueryVariableBuilder('job')
        .label('Job')
        .datasource(DATASOURCE)
        .query('label_values(ratelimit_build_info, job)')
        .refresh(VariableRefresh.OnTimeRangeChanged)
        .includeAll(true)
        .allValue('.+')
        .multi(true),
    )
    .withVariable(
      new QueryVariableBuilder('instance')
        .label('Pod')
        .datasource(DATASOURCE)
        .query('label_values(ratelimit_build_info{job=~"$job"}, instance)')
        .refresh(VariableRefresh.OnTimeRangeChanged)
        .includeAll(true)
        .allValue('.+')
        .multi(true),
    );
}

/** The dashboard, as the SDK builds it. */
export function buildDashboard(): Dashboard {
  const d = new DashboardBuilder('ratelimit-ts')
    .uid('ratelimit-ts')
    .description(
      'Decisions, latency, backend, configuration, xDS, RLQS and the process of ratelimit-ts (deploy/monitoring).',
    )
    .tags(['ratelimit', 'envoy'])
    .editable()
    .refresh('30s')
    .time({ from: 'now-1h', to: 'now' })
    .timezone('browser');
  variables(d);
  for (const row of [decisionsRow, latencyRow, backendRow, configRow, rlqsRow, processRow]) row(d);
  return d.build();
}

/** The PromQL of every panel, as written (with the dashboard's variables). */
export function dashboardQueries(dashboard: Dashboard): string[] {
  const panels = (dashboard.panels ?? []) as Panel[];
  return panels.flatMap((p) =>
    (p.targets ?? []).map((t: Dataquery) => (t as { expr?: string }).expr ?? ''),
  );
}

/** The JSON file's text (.prettierignore leaves it as written here). */
export function dashboardJson(): string {
  return `${JSON.stringify(buildDashboard(), null, 2)}\n`;
}

if (require.main === module) {
  for (const file of DASHBOARD_FILES) writeFileSync(file, dashboardJson());
  console.log(`wrote ${DASHBOARD_FILES.map((f) => path.relative(ROOT, f)).join(', ')}`);
}
