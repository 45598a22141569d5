{{/* Names, labels and the hub's command line, shared by every template of the chart. */}}

{{/* The chart name, or nameOverride. */}}
{{- define "operator-hub.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Prefix of every object name: fullnameOverride, else the release name when it contains the chart name, else
     `<release>-<chart>`. Release `operator-hub` gives deploy/'s names. */}}
{{- define "operator-hub.fullname" -}}
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

{{/* Selector labels: what the Deployment, its pods and the Service match on (one release never selects another's). */}}
{{- define "operator-hub.selectorLabels" -}}
app.kubernetes.io/name: {{ include "operator-hub.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "operator-hub.labels" -}}
{{ include "operator-hub.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "operator-hub.serviceAccountName" -}}
{{- default (include "operator-hub.fullname" .) .Values.serviceAccount.name }}
{{- end }}

{{- define "operator-hub.kubeconfigsSecret" -}}
{{- default (printf "%s-kubeconfigs" (include "operator-hub.fullname" .)) .Values.kubeconfigs.secretName }}
{{- end }}

{{/* The image reference: repository:tag (default appVersion), then @digest when set (the runtime pulls by digest). */}}
{{- define "operator-hub.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- with .Values.image.digest }}@{{ . }}{{ end }}
{{- end }}

{{/* Name of the metrics container port (and the Service's port): https-metrics, or http-metrics when not secure. */}}
{{- define "operator-hub.metricsPortName" -}}
{{- if .Values.metrics.secure }}https-metrics{{ else }}http-metrics{{ end }}
{{- end }}

{{/* Where the metrics TLS Secret is mounted. */}}
{{- define "operator-hub.metricsCertDir" -}}
/app/metrics-certs
{{- end }}

{{/* Combinations the hub would refuse or that make no sense, as one clear line each. */}}
{{- define "operator-hub.validate" -}}
{{- if and .Values.leaderElection.enabled .Values.sharding.enabled }}
{{- fail "leaderElection.enabled and sharding.enabled are exclusive: sharded replicas share the clusters, a leader does all the work; set one of them to false" }}
{{- end }}
{{- if and .Values.sharding.warm (not .Values.sharding.enabled) }}
{{- fail "sharding.warm needs sharding.enabled: true" }}
{{- end }}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.enabled) }}
{{- fail "metrics.serviceMonitor.enabled needs metrics.enabled: true (the ServiceMonitor scrapes the metrics port)" }}
{{- end }}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.service.enabled) }}
{{- fail "metrics.serviceMonitor.enabled needs metrics.service.enabled: true (the ServiceMonitor selects that Service)" }}
{{- end }}
{{- if and .Values.metrics.tls.secretName (not .Values.metrics.secure) }}
{{- fail "metrics.tls.secretName needs metrics.secure: true (the certificate is for HTTPS)" }}
{{- end }}
{{- if and .Values.mirror.enabled (empty .Values.mirror.namespaces) }}
{{- fail "mirror.enabled needs mirror.namespaces: the namespaces Mirrors may read and write Secrets and ConfigMaps in (the hub gets a Role in each, never cluster-wide access)" }}
{{- end }}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.tls.secretName) (not .Values.metrics.serviceMonitor.tlsConfig.ca) (not .Values.metrics.serviceMonitor.tlsConfig.insecureSkipVerify) }}
{{- fail "metrics.serviceMonitor.enabled needs a certificate Prometheus can verify: set metrics.tls.secretName (e.g. from cert-manager, examples/cert-manager-tls.yaml) or metrics.serviceMonitor.tlsConfig.ca; insecureSkipVerify: true accepts any certificate" }}
{{- end }}
{{- if empty .Values.clusters }}
{{- fail "clusters is empty: name kubeconfig contexts, `all` or `in-cluster`" }}
{{- end }}
{{- end }}

{{/* The cluster flags the hub and its uninstall clean-up share: which clusters, where they are registered, which
     namespaces. */}}
{{- define "operator-hub.clusterArgs" -}}
- --clusters
- {{ join "," .Values.clusters | quote }}
{{- range .Values.namespaces }}
- --namespace
- {{ . | quote }}
{{- end }}
{{- with .Values.clusterSecrets.namespace }}
- --cluster-secrets
- {{ . | quote }}
{{- end }}
{{- end }}

{{/* The hub's arguments, in deploy/deployment.yaml's order. */}}
{{- define "operator-hub.args" -}}
- --clusters
- {{ join "," .Values.clusters | quote }}
- --liveness
- {{ printf "http://0.0.0.0:%v/healthz" .Values.health.port | quote }}
{{- with .Values.health.readinessClusters }}
- --readiness-clusters
- {{ . | quote }}
{{- end }}
{{- if .Values.leaderElection.enabled }}
- --leader-elect
{{- with .Values.leaderElection.id }}
- --leader-elect-id
- {{ . | quote }}
{{- end }}
{{- end }}
{{- if .Values.sharding.enabled }}
- --shard
{{- if .Values.sharding.warm }}
- --shard-warm
{{- end }}
{{- end }}
- --log-format
- {{ .Values.logFormat | quote }}
{{- with .Values.logLevel }}
- --log-level
- {{ . | quote }}
{{- end }}
{{- range .Values.namespaces }}
- --namespace
- {{ . | quote }}
{{- end }}
{{- if .Values.mirror.enabled }}
- --operators=uuid,mirror
- {{ printf "--mirror-namespaces=%s" (join "," .Values.mirror.namespaces) | quote }}
{{- else }}
- --operators=uuid
{{- end }}
{{- if .Values.metrics.enabled }}
- {{ printf "--metrics-bind-address=:%v" .Values.metrics.port | quote }}
{{- if not .Values.metrics.secure }}
- --metrics-secure=false
{{- end }}
{{- if .Values.metrics.tls.secretName }}
- --tls-cert-file
- {{ printf "%s/tls.crt" (include "operator-hub.metricsCertDir" .) | quote }}
- --tls-private-key-file
- {{ printf "%s/tls.key" (include "operator-hub.metricsCertDir" .) | quote }}
{{- end }}
{{- end }}
{{- with .Values.clusterSecrets.namespace }}
- --cluster-secrets
- {{ . | quote }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}
