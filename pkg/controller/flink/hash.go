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
	Image                 string                        `json:"image"`
	ImagePullPolicy       corev1.PullPolicy             `json:"imagePullPolicy,omitempty"`
	ImagePullSecrets      []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	ServiceAccountName    string                        `json:"serviceAccountName,omitempty"`
	SecurityContext       *corev1.PodSecurityContext    `json:"securityContext,omitempty"`
	FlinkConfig           v1beta1.FlinkConfig           `json:"flinkConfig,omitempty"`
	FlinkVersion          string                        `json:"flinkVersion,omitempty"`
	JobManagerConfig      v1beta1.JobManagerConfig      `json:"jobManagerConfig"`
	TaskManagerConfig     v1beta1.TaskManagerConfig     `json:"taskManagerConfig"`
	JarName               string                        `json:"jarName"`
	EntryClass            string                        `json:"entryClass,omitempty"`
	ProgramArgs           string                        `json:"programArgs,omitempty"`
	ProgramArgsList       []string                      `json:"programArgsList,omitempty"`
	Parallelism           int32                         `json:"parallelism"`
	AllowNonRestoredState bool                          `json:"allowNonRestoredState,omitempty"`
	RPCPort               *int32                        `json:"rpcPort,omitempty"`
	BlobPort              *int32                        `json:"blobPort,omitempty"`
	QueryPort             *int32                        `json:"queryPort,omitempty"`
	UIPort                *int32                        `json:"uiPort,omitempty"`
	MetricsQueryPort      *int32                        `json:"metricsQueryPort,omitempty"`
	Volumes               []corev1.Volume               `json:"volumes,omitempty"`
	VolumeMounts          []corev1.VolumeMount          `json:"volumeMounts,omitempty"`
	RestartNonce          string                        `json:"restartNonce,omitempty"`
}

// ClusterHash names the cluster that the application's spec asks for, as 8 hex digits (FNV-32a of the
// canonical JSON of the hashed fields; encoding/json sorts map keys, so the result does not depend on
// map order).
//
// The spec is hashed as written, before defaults: omitting taskSlots and writing the default 16 give
// different hashes. Defaulting first would tie every hash to the operator's defaults, so changing a
// default would redeploy every application that relies on it.
func ClusterHash(app *v1beta1.FlinkApplication) string {
	b, err := json.Marshal(hashedFields(&app.Spec, app.Spec.FlinkConfig))
	if err != nil {
		// Only a flinkConfig value that JSON cannot encode (NaN, a func) gets here, and such a spec
		// cannot come from the API server. Hash the values' printed form so that the result is still
		// a deterministic function of the spec.
		printed := make(v1beta1.FlinkConfig, len(app.Spec.FlinkConfig))
		for k, v := range app.Spec.FlinkConfig {
			printed[k] = fmt.Sprint(v)
		}
		b, _ = json.Marshal(hashedFields(&app.Spec, printed))
	}
	h := fnv.New32a()
	_, _ = h.Write(b)
	return fmt.Sprintf("%08x", h.Sum32())
}

func hashedFields(s *v1beta1.FlinkApplicationSpec, flinkConfig v1beta1.FlinkConfig) hashedSpec {
	return hashedSpec{
		Image:                 s.Image,
		ImagePullPolicy:       s.ImagePullPolicy,
		ImagePullSecrets:      s.ImagePullSecrets,
		ServiceAccountName:    s.ServiceAccountName,
		SecurityContext:       s.SecurityContext,
		FlinkConfig:           flinkConfig,
		FlinkVersion:          s.FlinkVersion,
		JobManagerConfig:      s.JobManagerConfig,
		TaskManagerConfig:     s.TaskManagerConfig,
		JarName:               s.JarName,
		EntryClass:            s.EntryClass,
		ProgramArgs:           s.ProgramArgs,
		ProgramArgsList:       s.ProgramArgsList,
		Parallelism:           s.Parallelism,
		AllowNonRestoredState: s.AllowNonRestoredState,
		RPCPort:               s.RPCPort,
		BlobPort:              s.BlobPort,
		QueryPort:             s.QueryPort,
		UIPort:                s.UIPort,
		MetricsQueryPort:      s.MetricsQueryPort,
		Volumes:               s.Volumes,
		VolumeMounts:          s.VolumeMounts,
		RestartNonce:          s.RestartNonce,
	}
}
