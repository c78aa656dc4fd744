{{/* The release's full name: the chart name, prefixed by the release name unless it
holds it already; 63 characters at most (a label value and DNS name). */}}
{{- define "grc.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "grc.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "grc.labels" -}}
{{ include "grc.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "grc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "grc.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The RBAC subjects: the service account, then rbac.extraSubjects. */}}
{{- define "grc.subjects" -}}
- kind: ServiceAccount
  name: {{ include "grc.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- range .Values.rbac.extraSubjects }}
{{- if eq .kind "ServiceAccount" }}
- kind: ServiceAccount
  name: {{ required "rbac.extraSubjects: a ServiceAccount needs a name" .name }}
  namespace: {{ required "rbac.extraSubjects: a ServiceAccount needs a namespace" .namespace }}
{{- else if or (eq .kind "User") (eq .kind "Group") }}
- kind: {{ .kind }}
  apiGroup: rbac.authorization.k8s.io
  name: {{ required "rbac.extraSubjects: a subject needs a name" .name }}
{{- else }}
{{- fail (printf "rbac.extraSubjects: kind %q is not User, Group or ServiceAccount" .kind) }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The user names of the subjects, as the API server reports them (a service account's
is system:serviceaccount:NAMESPACE:NAME), a CEL list of strings. */}}
{{- define "grc.userNames" -}}
{{- $names := list (printf "system:serviceaccount:%s:%s" .Release.Namespace (include "grc.serviceAccountName" .)) -}}
{{- range .Values.rbac.extraSubjects -}}
{{- if eq .kind "ServiceAccount" -}}
{{- $names = append $names (printf "system:serviceaccount:%s:%s" .namespace .name) -}}
{{- else if eq .kind "User" -}}
{{- $names = append $names .name -}}
{{- end -}}
{{- end -}}
{{- $names | toJson -}}
{{- end -}}

{{/* The group names of the subjects, a CEL list of strings. */}}
{{- define "grc.groupNames" -}}
{{- $names := list -}}
{{- range .Values.rbac.extraSubjects -}}
{{- if eq .kind "Group" -}}
{{- $names = append $names .name -}}
{{- end -}}
{{- end -}}
{{- $names | toJson -}}
{{- end -}}

{{/* What the controller does with cluster-scoped objects: GatewayClasses. */}}
{{- define "grc.clusterRules" -}}
# Watch caches (list + watch); the reconcile never GETs.
- apiGroups: [gateway.networking.k8s.io]
  resources: [gatewayclasses]
  verbs: [list, watch]
# The class's Accepted condition.
- apiGroups: [gateway.networking.k8s.io]
  resources: [gatewayclasses/status]
  verbs: [patch]
# Namespaces by their metadata: the labels a listener's allowedRoutes namespace selector
# matches (read from the cache, for a Gateway with such a listener only).
- apiGroups: [""]
  resources: [namespaces]
  verbs: [list, watch]
{{- end -}}

{{/* What the controller does in the namespaces it watches. */}}
{{- define "grc.namespacedRules" -}}
- apiGroups: [gateway.networking.k8s.io]
  resources: [gateways]
  verbs: [list, watch]
# The status merge patch.
- apiGroups: [gateway.networking.k8s.io]
  resources: [gateways/status]
  verbs: [patch]
# The LB Deployment's ownerReference sets blockOwnerDeletion, which the
# OwnerReferencesPermissionEnforcement admission plugin allows only to a writer that may
# update the owner's finalizers.
- apiGroups: [gateway.networking.k8s.io]
  resources: [gateways/finalizers]
  verbs: [update]
- apiGroups: [meridio-2.nordix.org]
  resources: [gatewayconfigurations, l34routes]
  verbs: [list, watch]
# Deployments are watched: the LB ones (label-selected) whole, every one by its metadata
# only (a colliding one wakes its Gateway). An own LB Deployment whose managed-by label was
# removed is read with a GET. The LB ones are created (POST) and replaced (PUT), never
# patched or deleted (garbage collection deletes them with their Gateway). The admission
# policy narrows create and update to the LB ones.
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch, create, update]
# Events on the Gateways (kube-runtime's recorder creates, then patches a series).
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end -}}
