{{/* Names and labels shared by the templates. */}}
{{- define "mirage-guard.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "mirage-guard.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "mirage-guard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mirage-guard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
The sidecar's pods: the release's labels and their component. The PostgreSQL pod and the
calibration job's pods carry the release's labels too, with their own component; selecting on
the release's labels alone put the PostgreSQL pod behind the sidecar's Services and under the
Deployment's selector (tests/deploy/test_helm_rendered.py).
*/}}
{{- define "mirage-guard.sidecarSelectorLabels" -}}
{{ include "mirage-guard.selectorLabels" . }}
app.kubernetes.io/component: sidecar
{{- end -}}

{{- define "mirage-guard.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "mirage-guard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "mirage-guard.secretName" -}}
{{- default (include "mirage-guard.fullname" .) .Values.existingSecret -}}
{{- end -}}
