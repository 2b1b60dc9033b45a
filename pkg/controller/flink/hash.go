package flink

import (
	"encoding/json"
	"fmt"
	"hash/fnv"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	corev1 "k8s.io/api/core/v1"
)

// hashedSpec lists the spec fields that shape a cluster or its job. A field belongs here if changing
// it must start a new cluster and move the job onto it. Fields that steer the operator instead
// (forceRollback, deleteMode, savepoint and recovery settings, scaleMode, deploymentMode, ingress)
// stay out, as do metadata and status: changing them must not redeploy.
//
// Renaming or reordering fields here changes every application's hash and so redeploys every
// application on operator upgrade; add new fields with omitempty so that existing hashes survive.
type hashedSpec struct {
	Image              string                        `json:"image"`
	ImagePullPolicy    corev1.PullPolicy             `json:"imagePullPolicy,omitempty"`
	ImagePullSecrets   []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	ServiceAccountName string                        `json:"serviceAccountName,omitempty"`
	SecurityContext    *corev1.PodSecurityContext    `json:"securityContext,omitempty"`
	FlinkConfig        v1beta1.FlinkConfig           `json:"flinkConfig,omitempty"`
	FlinkVersion       string                        `json:"flinkVersion,omitempty"`
	JobManagerConfig   v1beta1.JobManagerConfig      `json:"jobManagerConfig"`
	TaskManagerConfig  v1beta1.TaskManagerConfig     `json:"taskManagerConfig"`
	JarName            string                        `json:"jarName"`
	// JarURI is the jar's path in the image; empty (and left out, so older hashes stand) with jarName.
	JarURI                string               `json:"jarURI,omitempty"`
	EntryClass            string               `json:"entryClass,omitempty"`
	ProgramArgs           string               `json:"programArgs,omitempty"`
	ProgramArgsList       []string             `json:"programArgsList,omitempty"`
	Parallelism           int32                `json:"parallelism"`
	AllowNonRestoredState bool                 `json:"allowNonRestoredState,omitempty"`
	RPCPort               *int32               `json:"rpcPort,omitempty"`
	BlobPort              *int32               `json:"blobPort,omitempty"`
	QueryPort             *int32               `json:"queryPort,omitempty"`
	UIPort                *int32               `json:"uiPort,omitempty"`
	MetricsQueryPort      *int32               `json:"metricsQueryPort,omitempty"`
	Volumes               []corev1.Volume      `json:"volumes,omitempty"`
	VolumeMounts          []corev1.VolumeMount `json:"volumeMounts,omitempty"`
	RestartNonce          string               `json:"restartNonce,omitempty"`
	// SavepointRedeployNonce starts a new cluster, as restartNonce does, for a job redeployed from a
	// named savepoint.
	SavepointRedeployNonce string `json:"savepointRedeployNonce,omitempty"`
	// PodTemplate is spec.podTemplate. The components' templates are hashed with jobManagerConfig
	// and taskManagerConfig; without templates, none of them changes a hash.
	PodTemplate *corev1.PodTemplateSpec `json:"podTemplate,omitempty"`
	// LogConfiguration is spec.logConfiguration: a new cluster gets it, as any spec change does.
	LogConfiguration map[string]string `json:"logConfiguration,omitempty"`
}

// ClusterHash names the cluster that the application's spec asks for, as 8 hex digits (FNV-32a of the
// canonical JSON of the hashed fields; encoding/json sorts map keys, so the result does not depend on
// map order).
//
// The spec is hashed as written, before defaults: omitting taskSlots and writing the default 16 give
// different hashes. Defaulting first would tie every hash to the operator's defaults, so changing a
// default would redeploy every application that relies on it.
func ClusterHash(app *v1beta1.FlinkApplication) string {
	h := clusterFields(OwnerFromApplication(app))
	s := &app.Spec
	h.JarName, h.JarURI, h.EntryClass, h.ProgramArgs, h.ProgramArgsList = s.JarName, s.JarURI, s.EntryClass, s.ProgramArgs, s.ProgramArgsList
	h.AllowNonRestoredState, h.SavepointRedeployNonce = s.AllowNonRestoredState, string(s.SavepointRedeployNonce)
	return hashOf(h)
}

// SessionClusterHash names the cluster that a FlinkSessionCluster's spec asks for, as ClusterHash
// does an application's. It hashes the same fields in the same form, the job's left empty and the
// parallelism replicas × taskSlots (see OwnerFromSessionCluster), so that the hashes of session
// clusters running before it existed, when a session cluster was hashed as an application, stay the
// same and upgrading the operator redeploys none of them.
func SessionClusterHash(c *v1beta1.FlinkSessionCluster) string {
	return hashOf(clusterFields(OwnerFromSessionCluster(c)))
}

// hashOf is the hash of the hashed fields.
func hashOf(h hashedSpec) string {
	b, err := json.Marshal(h)
	if err != nil {
		// Only a flinkConfig value that JSON cannot encode (NaN, a func) gets here, and such a spec
		// cannot come from the API server. Hash the values' printed form so that the result is still
		// a deterministic function of the spec.
		printed := make(v1beta1.FlinkConfig, len(h.FlinkConfig))
		for k, v := range h.FlinkConfig {
			printed[k] = fmt.Sprint(v)
		}
		h.FlinkConfig = printed
		b, _ = json.Marshal(h)
	}
	sum := fnv.New32a()
	_, _ = sum.Write(b)
	return fmt.Sprintf("%08x", sum.Sum32())
}

// clusterFields are the hashed fields that any owner of a cluster has; the job's are left empty.
func clusterFields(o ClusterOwner) hashedSpec {
	s := &o.Spec
	return hashedSpec{
		Image:              s.Image,
		ImagePullPolicy:    s.ImagePullPolicy,
		ImagePullSecrets:   s.ImagePullSecrets,
		ServiceAccountName: s.ServiceAccountName,
		SecurityContext:    s.SecurityContext,
		FlinkConfig:        s.FlinkConfig,
		FlinkVersion:       s.FlinkVersion,
		JobManagerConfig:   s.JobManagerConfig,
		TaskManagerConfig:  o.TaskManagerConfig,
		Parallelism:        o.Parallelism,
		RPCPort:            s.RPCPort,
		BlobPort:           s.BlobPort,
		QueryPort:          s.QueryPort,
		UIPort:             s.UIPort,
		MetricsQueryPort:   s.MetricsQueryPort,
		Volumes:            s.Volumes,
		VolumeMounts:       s.VolumeMounts,
		RestartNonce:       o.RestartNonce,
		PodTemplate:        s.PodTemplate,
		LogConfiguration:   s.LogConfiguration,
	}
}
