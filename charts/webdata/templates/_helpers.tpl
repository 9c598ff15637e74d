{{/* Names and labels shared by every template. */}}
{{- define "webdata.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "webdata.labels" -}}
app.kubernetes.io/name: webdata
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "webdata.selector" -}}
app.kubernetes.io/name: webdata
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "webdata.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "webdata.secretName" -}}
{{- .Values.auth.existingSecret | default (include "webdata.fullname" .) -}}
{{- end -}}

{{- define "webdata.postgresHost" -}}
{{ include "webdata.fullname" . }}-postgres
{{- end -}}
