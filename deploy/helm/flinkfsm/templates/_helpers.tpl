{{/* The chart's name, and the name of everything it creates. */}}
{{- define "flinkfsm.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "flinkfsm.fullname" -}}
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

{{- define "flinkfsm.selectorLabels" -}}
app.kubernetes.io/name: {{ include "flinkfsm.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "flinkfsm.labels" -}}
{{ include "flinkfsm.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{- define "flinkfsm.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "flinkfsm.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The operator's config section, with limitNamespace following rbac.watchNamespaces in namespaced scope. */}}
{{- define "flinkfsm.config" -}}
{{- $cfg := deepCopy .Values.config }}
{{- if and (eq .Values.rbac.scope "namespaced") (not $cfg.limitNamespace) }}
{{- $_ := set $cfg "limitNamespace" (join "," .Values.rbac.watchNamespaces) }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/* The port of config.metricsAddress: the container's metrics port. */}}
{{- define "flinkfsm.metricsPort" -}}
{{- $port := regexFind "[0-9]+$" (toString .Values.config.metricsAddress) }}
{{- if not $port }}
{{- fail (printf "config.metricsAddress %q has no port" .Values.config.metricsAddress) }}
{{- end }}
{{- $port }}
{{- end }}

{{/* Where the leader Lease lives, and so where the operator may write Leases. */}}
{{- define "flinkfsm.leaseNamespace" -}}
{{- .Values.config.leaderElection.leaseNamespace | default .Release.Namespace }}
{{- end }}

{{/* Whether the operator reaches JobManagers through the API server's service proxy. */}}
{{- define "flinkfsm.proxy" -}}
{{- if or (eq (toString .Values.config.flinkUrlMode) "APIServerProxy") .Values.config.useKubectlProxy }}true{{ end }}
{{- end }}

{{/* Settings that cannot work together fail the render instead of the operator. */}}
{{- define "flinkfsm.validate" -}}
{{- if not (has .Values.rbac.scope (list "cluster" "namespaced")) }}
{{- fail (printf "rbac.scope %q is not one of cluster, namespaced" .Values.rbac.scope) }}
{{- end }}
{{- if and (eq .Values.rbac.scope "namespaced") (not .Values.rbac.watchNamespaces) }}
{{- fail "rbac.scope namespaced needs rbac.watchNamespaces: the namespaces the operator gets a Role in and watches" }}
{{- end }}
{{- if and (eq .Values.rbac.scope "namespaced") .Values.config.limitNamespace }}
{{- range $ns := splitList "," .Values.config.limitNamespace }}
{{- if not (has (trim $ns) $.Values.rbac.watchNamespaces) }}
{{- fail (printf "config.limitNamespace names %q, which rbac.watchNamespaces lacks: the operator would get no Role there" (trim $ns)) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and (gt (int .Values.replicas) 1) (not .Values.config.leaderElection.enabled) }}
{{- fail "replicas > 1 needs config.leaderElection.enabled: two acting operators would both deploy jobs" }}
{{- end }}
{{- end }}

{{/* The operator's permissions on what it manages; deploy/rbac.yaml's, where each rule says why. */}}
{{- define "flinkfsm.rules" -}}
- apiGroups: ["flink.k8s.io"]
  resources: ["flinkapplications", "flinksessionclusters", "flinksessionjobs"]
  verbs: ["get", "list", "watch", "update", "patch"]
- apiGroups: ["flink.k8s.io"]
  resources: ["flinkapplications/status", "flinksessionclusters/status", "flinksessionjobs/status"]
  verbs: ["get", "update", "patch"]
- apiGroups: ["flink.k8s.io"]
  resources: ["flinkapplications/finalizers", "flinksessionclusters/finalizers", "flinksessionjobs/finalizers"]
  verbs: ["update"]
- apiGroups: ["flink.k8s.io"]
  resources: ["flinksnapshots"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
- apiGroups: ["flink.k8s.io"]
  resources: ["flinksnapshots/status"]
  verbs: ["update", "patch"]
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
- apiGroups: [""]
  resources: ["services"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["networking.k8s.io"]
  resources: ["ingresses"]
  verbs: ["list", "watch", "create", "patch", "delete"]
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["list", "watch", "create", "patch", "delete"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch", "update"]
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch", "update"]
{{- end }}

{{- define "flinkfsm.namespacesRule" -}}
- apiGroups: [""]
  resources: ["namespaces"]
  verbs: ["get"]
{{- end }}

{{- define "flinkfsm.proxyRule" -}}
- apiGroups: [""]
  resources: ["services/proxy"]
  verbs: ["create", "delete", "get", "patch", "update"]
{{- end }}

{{- define "flinkfsm.subject" -}}
- kind: ServiceAccount
  name: {{ include "flinkfsm.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end }}
