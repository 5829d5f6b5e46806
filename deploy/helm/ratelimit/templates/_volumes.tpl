{{/* The pod's volumes and the container's mounts: rule files and the Secrets the settings point into. */}}

{{/* The Secrets mounted under /etc/ratelimit/<dir>: a list of (dir, secretName) in use. */}}
{{- define "ratelimit.secretMounts" -}}
{{- $mounts := list }}
{{- if eq .Values.backend.type "redis" }}
{{- $instances := list (dict "dir" "redis" "v" .Values.redis) }}
{{- if .Values.redis.perSecond.enabled }}
{{- $instances = append $instances (dict "dir" "redis-persecond" "v" .Values.redis.perSecond) }}
{{- end }}
{{- range $instances }}
{{- if .v.auth.existingSecret }}
{{- $mounts = append $mounts (dict "dir" (printf "%s-auth" .dir) "secret" .v.auth.existingSecret) }}
{{- end }}
{{- if .v.tls.enabled }}
{{- $mounts = append $mounts (dict "dir" (printf "%s-tls" .dir) "secret" .v.tls.secretName) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and (eq .Values.backend.type "memcache") .Values.memcache.tls.enabled }}
{{- $mounts = append $mounts (dict "dir" "memcache-tls" "secret" .Values.memcache.tls.secretName) }}
{{- end }}
{{- if and (eq .Values.config.type "xds") .Values.xds.tls.enabled }}
{{- $mounts = append $mounts (dict "dir" "xds-tls" "secret" .Values.xds.tls.secretName) }}
{{- end }}
{{- if .Values.grpcTls.enabled }}
{{- $mounts = append $mounts (dict "dir" "grpc-tls" "secret" .Values.grpcTls.secretName) }}
{{- end }}
{{- toJson $mounts }}
{{- end }}

{{- define "ratelimit.volumes" -}}
{{- if eq .Values.config.type "file" }}
- name: rules
  configMap:
    name: {{ include "ratelimit.rulesConfigMap" . }}
{{- end }}
{{- range (include "ratelimit.secretMounts" . | fromJsonArray) }}
- name: {{ .dir }}
  secret:
    secretName: {{ .secret }}
    # 0440: readable by the pod's group (fsGroup), not by others.
    defaultMode: 288
{{- end }}
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "ratelimit.volumeMounts" -}}
{{- if eq .Values.config.type "file" }}
- name: rules
  mountPath: {{ include "ratelimit.rulesPath" . }}
  readOnly: true
{{- end }}
{{- range (include "ratelimit.secretMounts" . | fromJsonArray) }}
- name: {{ .dir }}
  mountPath: {{ printf "/etc/ratelimit/%s" .dir }}
  readOnly: true
{{- end }}
{{- with .Values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end }}
