{{/* Names, labels and small values shared by the templates. */}}

{{- define "ratelimit.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name, at most 63 characters (a DNS label). */}}
{{- define "ratelimit.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ratelimit.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "ratelimit.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ratelimit.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "ratelimit.labels" -}}
helm.sh/chart: {{ include "ratelimit.chart" . }}
{{ include "ratelimit.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "ratelimit.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ratelimit.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ratelimit.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The ConfigMap of rule files: the chart's own, or the one named in rules.existingConfigMap. */}}
{{- define "ratelimit.rulesConfigMap" -}}
{{- default (printf "%s-rules" (include "ratelimit.fullname" .)) .Values.rules.existingConfigMap }}
{{- end }}

{{/* Where the rule files are mounted: RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY. */}}
{{- /*
HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED as written: config.healthyWithAtLeastOneConfigLoaded when
there is a configuration to wait for (rule files, an existing ConfigMap, or xDS), else false: a
file-mode install with no rules would otherwise never become Ready.
*/ -}}
{{- define "ratelimit.requireConfig" -}}
{{- $rules := or (ne .Values.config.type "file") .Values.rules.files .Values.rules.existingConfigMap -}}
{{- and .Values.config.healthyWithAtLeastOneConfigLoaded (not (empty $rules)) -}}
{{- end }}

{{- /*
FORCE_START_WITHOUT_INITIAL_CONFIG as written: config.forceStartWithoutInitialConfig, where auto
is true in xDS mode (a pod started while the management server is away starts and stays
unready, instead of failing its startup probe and restarting) and false in file mode.
*/ -}}
{{- define "ratelimit.forceStart" -}}
{{- $value := .Values.config.forceStartWithoutInitialConfig -}}
{{- if eq (toString $value) "auto" -}}
{{- eq .Values.config.type "xds" -}}
{{- else -}}
{{- $value -}}
{{- end -}}
{{- end }}

{{- define "ratelimit.rulesPath" -}}
{{- clean (printf "%s/%s/%s" .Values.rules.runtimeRoot .Values.rules.runtimeSubdirectory .Values.rules.runtimeAppDirectory) }}
{{- end }}

{{/* A map as the service's k1:v1,k2:v2 list, sorted by key. */}}
{{- define "ratelimit.pairs" -}}
{{- $pairs := list }}
{{- range $k, $v := . }}
{{- $pairs = append $pairs (printf "%s:%v" $k $v) }}
{{- end }}
{{- join "," $pairs }}
{{- end }}

{{/* The CPU request: resources.requests.cpu, or workers x cpuPerWorkerMillicores. */}}
{{- define "ratelimit.resources" -}}
{{- $resources := deepCopy .Values.resources }}
{{- $requests := default (dict) (get $resources "requests") }}
{{- /* get, not .cpu: lint --strict refuses reading a key that is not there. */}}
{{- if not (get $requests "cpu") }}
{{- $_ := set $requests "cpu" (printf "%dm" (mul .Values.workers .Values.cpuPerWorkerMillicores)) }}
{{- end }}
{{- $_ := set $resources "requests" $requests }}
{{- toYaml $resources }}
{{- end }}
