{{- define "gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "gateway.fullname" -}}
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

{{- define "gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "gateway.labels" -}}
{{ include "gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{- define "gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "gateway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding credentials: the chart's own, or the one the operator manages. */}}
{{- define "gateway.secretName" -}}
{{- default (include "gateway.fullname" .) .Values.existingSecret.name }}
{{- end }}

{{- define "gateway.hasApiKeys" -}}
{{- if or .Values.auth.apiKeys (and .Values.existingSecret.name .Values.existingSecret.hasApiKeys) }}true{{ end }}
{{- end }}

{{/* Keys of the Secret: the chart's own use the same names as an existing Secret's defaults. */}}
{{- define "gateway.secretKeys" -}}
{{- $keys := .Values.existingSecret -}}
apiKeys: {{ $keys.apiKeysKey }}
jwtSecret: {{ $keys.jwtSecretKey }}
daguApiToken: {{ $keys.daguApiTokenKey }}
redisUrl: {{ $keys.redisUrlKey }}
{{- end }}

{{/* The gateway listens on 0.0.0.0, so it refuses to start without a way to authenticate callers. */}}
{{- define "gateway.requireAuth" -}}
{{- $config := .Values.config | default dict -}}
{{- if not (or (include "gateway.hasApiKeys" .) .Values.auth.jwtSecret .Values.existingSecret.name $config.AUTH_JWT_PUBLIC_KEY $config.AUTH_JWKS_URL) -}}
{{- fail "set auth.apiKeys, auth.jwtSecret, existingSecret.name, config.AUTH_JWT_PUBLIC_KEY or config.AUTH_JWKS_URL: the gateway serves no anonymous callers off loopback" -}}
{{- end -}}
{{- end }}

{{/* Host names the gateway answers to: loopback, the pod IP (kubelet probes, Prometheus), the Service's names. */}}
{{- define "gateway.allowedHosts" -}}
{{- $svc := include "gateway.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- $hosts := list "localhost" "127.0.0.1" "$(POD_IP)" $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) -}}
{{- concat $hosts .Values.allowedHosts | uniq | join "," -}}
{{- end }}

{{- define "gateway.minReplicas" -}}
{{- if .Values.autoscaling.enabled }}{{ .Values.autoscaling.minReplicas }}{{ else }}{{ .Values.replicaCount }}{{ end }}
{{- end }}

{{/* Tracing on needs a collector to send to. */}}
{{- define "gateway.requireTracingEndpoint" -}}
{{- if and .Values.tracing.enabled (not .Values.tracing.endpoint) -}}
{{- fail "tracing.enabled: set tracing.endpoint, the collector's OTLP/HTTP URL (e.g. http://jaeger-collector.tracing:4318)" -}}
{{- end -}}
{{- end }}

{{/* The collector's port (NetworkPolicy egress): the endpoint's own, else its scheme's default. */}}
{{- define "gateway.tracingPort" -}}
{{- $url := urlParse .Values.tracing.endpoint -}}
{{- $port := regexFind ":[0-9]+$" $url.host | trimPrefix ":" -}}
{{- if $port }}{{ $port }}{{ else if eq $url.scheme "https" }}443{{ else }}80{{ end }}
{{- end }}
