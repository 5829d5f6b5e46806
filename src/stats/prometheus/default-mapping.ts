// The built-in mapping from statsd names to Prometheus metrics, as the reference ships it.

const RULE_STATS = [
  'near_limit',
  'over_limit',
  'total_hits',
  'within_limit',
  'shadow_mode',
] as const;

function twoSegmentRules(): string {
  return RULE_STATS.map(
    (stat) => `  - match: "ratelimit.service.rate_limit.*.*.${stat}"
    name: "ratelimit_service_rate_limit_${stat}"
    timer_type: "histogram"
    labels:
      domain: "$1"
      key1: "$2"
`,
  ).join('');
}

function threeSegmentRules(): string {
  return RULE_STATS.map(
    (
      stat,
    ) => `  - match: "ratelimit\\\\.service\\\\.rate_limit\\\\.([^\\\\.]*)\\\\.([^\\\\.]*)\\\\.([^\\\\.]*)(\\\\..*)?\\\\.${stat}"
    match_type: regex
    name: "ratelimit_service_rate_limit_${stat}"
    timer_type: "histogram"
    labels:
      domain: "$1"
      key1: "$2"
      key2: "$3"
`,
  ).join('');
}

/**
 * The xDS client's statistics, which the reference does not have: named as their statsd names
 * escaped (what an unmapped name would get), with help text.
 */
const XDS_RULES = `  - match: "ratelimit.xds.connected"
    name: "ratelimit_xds_connected"
    match_metric_type: gauge
    help: "1 while a stream to the xDS management server is open and answered, else 0."
  - match: "ratelimit.xds.update_age_seconds"
    name: "ratelimit_xds_update_age_seconds"
    match_metric_type: gauge
    help: "Seconds since the xDS client last accepted (ACKed) an update."
  - match: "ratelimit.xds.acks"
    name: "ratelimit_xds_acks"
    match_metric_type: counter
    help: "xDS updates accepted (ACK requests sent)."
  - match: "ratelimit.xds.nacks"
    name: "ratelimit_xds_nacks"
    match_metric_type: counter
    help: "xDS updates refused (NACK requests sent)."
  - match: "ratelimit.xds.last_ack_version"
    name: "ratelimit_xds_last_ack_version"
    match_metric_type: gauge
    help: "1, labelled with the version of the last xDS update accepted."
  - match: "ratelimit.xds.last_nack_version"
    name: "ratelimit_xds_last_nack_version"
    match_metric_type: gauge
    help: "1, labelled with the version of the last xDS update refused."
`;

/**
 * The mapping file, in statsd_exporter's format. With `responseTimeAsMilliseconds` the response
 * time histogram keeps milliseconds (under the same name), as the reference's option does.
 */
export function defaultMapping(responseTimeAsMilliseconds: boolean): string {
  return `mappings:
${twoSegmentRules()}${threeSegmentRules()}  - match: "ratelimit.service.call.should_rate_limit.*"
    name: "ratelimit_service_should_rate_limit_error"
    match_metric_type: counter
    labels:
      err_type: "$1"
  - match: "ratelimit_server.*.total_requests"
    name: "ratelimit_service_total_requests"
    match_metric_type: counter
    labels:
      grpc_method: "$1"
  - match: "ratelimit_server.*.response_time"
    name: "ratelimit_service_response_time_seconds"
    timer_type: histogram
${responseTimeAsMilliseconds ? '' : '    scale: 0.001\n'}    labels:
      grpc_method: "$1"
  - match: "ratelimit.service.config_load_success"
    name: "ratelimit_service_config_load_success"
    match_metric_type: counter
  - match: "ratelimit.service.config_load_error"
    name: "ratelimit_service_config_load_error"
    match_metric_type: counter
${XDS_RULES}`;
}
