{{/* The service's settings as env entries. Every name is one the service reads (the chart's tests check). */}}

{{- define "ratelimit.env" -}}
- name: HOST
  value: "0.0.0.0"
- name: PORT
  value: {{ .Values.ports.http | quote }}
- name: GRPC_HOST
  value: "0.0.0.0"
- name: GRPC_PORT
  value: {{ .Values.ports.grpc | quote }}
- name: DEBUG_HOST
  value: "0.0.0.0"
- name: DEBUG_PORT
  value: {{ .Values.ports.debug | quote }}
- name: WORKERS
  value: {{ .Values.workers | quote }}
- name: LOG_LEVEL
  value: {{ .Values.log.level | quote }}
- name: LOG_FORMAT
  value: {{ .Values.log.format | quote }}
- name: FORCE_START_WITHOUT_INITIAL_CONFIG
  value: {{ include "ratelimit.forceStart" . | quote }}
- name: HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED
  value: {{ include "ratelimit.requireConfig" . | quote }}
{{- if eq .Values.config.type "xds" }}
{{- include "ratelimit.env.xds" . | trim | nindent 0 }}
{{- else }}
{{- include "ratelimit.env.files" . | trim | nindent 0 }}
{{- end }}
- name: BACKEND_TYPE
  value: {{ .Values.backend.type | quote }}
{{- if eq .Values.backend.type "redis" }}
{{- include "ratelimit.env.redisInstance" (dict "prefix" "REDIS_" "dir" "redis" "v" .Values.redis) | trim | nindent 0 }}
- name: REDIS_HEALTH_CHECK_ACTIVE_CONNECTION
  value: {{ .Values.redis.healthCheckActiveConnection | quote }}
- name: REDIS_PERSECOND
  value: {{ .Values.redis.perSecond.enabled | quote }}
{{- if .Values.redis.perSecond.enabled }}
{{- include "ratelimit.env.redisInstance" (dict "prefix" "REDIS_PERSECOND_" "dir" "redis-persecond" "v" .Values.redis.perSecond) | trim | nindent 0 }}
{{- end }}
{{- else if eq .Values.backend.type "memcache" }}
{{- include "ratelimit.env.memcache" . | trim | nindent 0 }}
{{- end }}
{{- include "ratelimit.env.stats" . | trim | nindent 0 }}
{{- if .Values.tracing.enabled }}
{{- include "ratelimit.env.tracing" . | trim | nindent 0 }}
{{- end }}
{{- if .Values.grpcTls.enabled }}
{{- include "ratelimit.env.grpcTls" . | trim | nindent 0 }}
{{- end }}
{{- range $name, $value := .Values.settings }}
- name: {{ $name }}
{{- /* Whole numbers read from YAML are floats: print 1048576, not 1.048576e+06. */}}
{{- if and (kindIs "float64" $value) (eq $value (floor $value)) }}
  value: {{ printf "%.0f" $value | quote }}
{{- else }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ratelimit.env.files" -}}
- name: CONFIG_TYPE
  value: "FILE"
- name: RUNTIME_ROOT
  value: {{ .Values.rules.runtimeRoot | quote }}
- name: RUNTIME_SUBDIRECTORY
  value: {{ .Values.rules.runtimeSubdirectory | quote }}
- name: RUNTIME_APPDIRECTORY
  value: {{ .Values.rules.runtimeAppDirectory | quote }}
{{- /* The kubelet swaps a ConfigMap's ..data symlink inside the mounted directory, not RUNTIME_ROOT. */}}
- name: RUNTIME_WATCH_ROOT
  value: "false"
- name: RUNTIME_IGNOREDOTFILES
  value: "true"
- name: MERGE_DOMAIN_CONFIG
  value: {{ .Values.config.mergeDomainConfig | quote }}
{{- end }}

{{- define "ratelimit.env.xds" -}}
- name: CONFIG_TYPE
  value: "GRPC_XDS_SOTW"
- name: CONFIG_GRPC_XDS_SERVER_URL
  value: {{ .Values.xds.serverUrl | quote }}
- name: CONFIG_GRPC_XDS_NODE_ID
  value: {{ default (include "ratelimit.fullname" .) .Values.xds.nodeId | quote }}
{{- with .Values.xds.nodeMetadata }}
- name: CONFIG_GRPC_XDS_NODE_METADATA
  value: {{ include "ratelimit.pairs" . | quote }}
{{- end }}
{{- if .Values.xds.additionalHeadersSecret.name }}
- name: CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS
  valueFrom:
    secretKeyRef:
      name: {{ .Values.xds.additionalHeadersSecret.name }}
      key: {{ .Values.xds.additionalHeadersSecret.key }}
{{- else if .Values.xds.additionalHeaders }}
- name: CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS
  value: {{ include "ratelimit.pairs" .Values.xds.additionalHeaders | quote }}
{{- end }}
{{- with .Values.xds.connectRetryInterval }}
- name: CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL
  value: {{ . | quote }}
{{- end }}
{{- with .Values.xds.tls }}
{{- if .enabled }}
- name: CONFIG_GRPC_XDS_SERVER_USE_TLS
  value: "true"
{{- if .caKey }}
- name: CONFIG_GRPC_XDS_SERVER_TLS_CACERT
  value: {{ printf "/etc/ratelimit/xds-tls/%s" .caKey | quote }}
{{- end }}
{{- if .certKey }}
- name: CONFIG_GRPC_XDS_CLIENT_TLS_CERT
  value: {{ printf "/etc/ratelimit/xds-tls/%s" .certKey | quote }}
- name: CONFIG_GRPC_XDS_CLIENT_TLS_KEY
  value: {{ printf "/etc/ratelimit/xds-tls/%s" .keyKey | quote }}
{{- end }}
{{- with .san }}
- name: CONFIG_GRPC_XDS_SERVER_TLS_SAN
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* One Redis instance; called with prefix (REDIS_ or REDIS_PERSECOND_), dir (its mount folder) and v (its values). */}}
{{- define "ratelimit.env.redisInstance" -}}
{{- $p := .prefix }}
{{- $v := .v }}
- name: {{ $p }}TYPE
  value: {{ $v.type | quote }}
- name: {{ $p }}URL
{{- if eq $v.type "sentinel" }}
  value: {{ prepend $v.sentinel.addresses $v.sentinel.masterName | join "," | quote }}
{{- else if eq $v.type "cluster" }}
  value: {{ join "," $v.cluster.nodes | quote }}
{{- else }}
  value: {{ $v.url | quote }}
{{- end }}
{{- if $v.auth.existingSecret }}
- name: {{ $p }}AUTH_FILE
  value: {{ printf "/etc/ratelimit/%s-auth/%s" .dir $v.auth.key | quote }}
{{- end }}
{{- if and (eq $v.type "sentinel") $v.sentinel.auth.existingSecret }}
- name: {{ $p }}SENTINEL_AUTH
  valueFrom:
    secretKeyRef:
      name: {{ $v.sentinel.auth.existingSecret }}
      key: {{ $v.sentinel.auth.key }}
{{- end }}
{{- if $v.tls.enabled }}
- name: {{ $p }}TLS
  value: "true"
{{- if $v.tls.caKey }}
- name: {{ $p }}TLS_CACERT
  value: {{ printf "/etc/ratelimit/%s-tls/%s" .dir $v.tls.caKey | quote }}
{{- end }}
{{- if $v.tls.certKey }}
- name: {{ $p }}TLS_CLIENT_CERT
  value: {{ printf "/etc/ratelimit/%s-tls/%s" .dir $v.tls.certKey | quote }}
- name: {{ $p }}TLS_CLIENT_KEY
  value: {{ printf "/etc/ratelimit/%s-tls/%s" .dir $v.tls.keyKey | quote }}
{{- end }}
- name: {{ $p }}TLS_SKIP_HOSTNAME_VERIFICATION
  value: {{ $v.tls.skipHostnameVerification | quote }}
{{- end }}
{{- with $v.timeout }}
- name: {{ $p }}TIMEOUT
  value: {{ . | quote }}
{{- end }}
{{- with $v.pipelineWindow }}
- name: {{ $p }}PIPELINE_WINDOW
  value: {{ . | quote }}
{{- end }}
- name: {{ $p }}CLOSE_CONNECTION_ON_READONLY_ERROR
  value: {{ $v.closeConnectionOnReadonlyError | quote }}
{{- end }}

{{- define "ratelimit.env.memcache" -}}
{{- with .Values.memcache }}
{{- if .hosts }}
- name: MEMCACHE_HOST_PORT
  value: {{ join "," .hosts | quote }}
{{- end }}
{{- if .srv }}
- name: MEMCACHE_SRV
  value: {{ .srv | quote }}
{{- end }}
{{- with .srvRefresh }}
- name: MEMCACHE_SRV_REFRESH
  value: {{ . | quote }}
{{- end }}
{{- if .tls.enabled }}
- name: MEMCACHE_TLS
  value: "true"
{{- if .tls.caKey }}
- name: MEMCACHE_TLS_CACERT
  value: {{ printf "/etc/ratelimit/memcache-tls/%s" .tls.caKey | quote }}
{{- end }}
{{- if .tls.certKey }}
- name: MEMCACHE_TLS_CLIENT_CERT
  value: {{ printf "/etc/ratelimit/memcache-tls/%s" .tls.certKey | quote }}
- name: MEMCACHE_TLS_CLIENT_KEY
  value: {{ printf "/etc/ratelimit/memcache-tls/%s" .tls.keyKey | quote }}
{{- end }}
- name: MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION
  value: {{ .tls.skipHostnameVerification | quote }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ratelimit.env.stats" -}}
{{- with .Values.stats }}
- name: USE_STATSD
  value: {{ .statsd.enabled | quote }}
{{- if .statsd.enabled }}
- name: STATSD_HOST
  value: {{ .statsd.host | quote }}
- name: STATSD_PORT
  value: {{ .statsd.port | quote }}
- name: STATSD_PROTOCOL
  value: {{ .statsd.protocol | quote }}
{{- end }}
- name: USE_PROMETHEUS
  value: {{ .prometheus.enabled | quote }}
{{- if .prometheus.enabled }}
- name: PROMETHEUS_ADDR
  value: {{ printf ":%v" .prometheus.port | quote }}
- name: PROMETHEUS_PATH
  value: {{ .prometheus.path | quote }}
{{- end }}
{{- with .extraTags }}
- name: EXTRA_TAGS
  value: {{ include "ratelimit.pairs" . | quote }}
{{- end }}
{{- with .flushInterval }}
- name: STATS_FLUSH_INTERVAL
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ratelimit.env.tracing" -}}
- name: TRACING_ENABLED
  value: "true"
- name: TRACING_EXPORTER_PROTOCOL
  value: {{ .Values.tracing.protocol | quote }}
- name: TRACING_SERVICE_NAME
  value: {{ .Values.tracing.serviceName | quote }}
- name: TRACING_SERVICE_NAMESPACE
  value: {{ default .Release.Namespace .Values.tracing.serviceNamespace | quote }}
- name: TRACING_SERVICE_INSTANCE_ID
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: TRACING_SAMPLING_RATE
  value: {{ .Values.tracing.samplingRate | quote }}
{{- with .Values.tracing.endpoint }}
{{- /* Read by the OpenTelemetry exporter itself, not by the service's settings. */}}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- end }}

{{- define "ratelimit.env.grpcTls" -}}
- name: GRPC_SERVER_USE_TLS
  value: "true"
- name: GRPC_SERVER_TLS_CERT
  value: {{ printf "/etc/ratelimit/grpc-tls/%s" .Values.grpcTls.certKey | quote }}
- name: GRPC_SERVER_TLS_KEY
  value: {{ printf "/etc/ratelimit/grpc-tls/%s" .Values.grpcTls.keyKey | quote }}
{{- if .Values.grpcTls.clientCaKey }}
- name: GRPC_CLIENT_TLS_CACERT
  value: {{ printf "/etc/ratelimit/grpc-tls/%s" .Values.grpcTls.clientCaKey | quote }}
{{- with .Values.grpcTls.clientSan }}
- name: GRPC_CLIENT_TLS_SAN
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}
