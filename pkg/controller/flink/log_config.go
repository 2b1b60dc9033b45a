package flink

import (
	"maps"
	"path"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A cluster's logging configuration (spec.logConfiguration): its files in a ConfigMap of the
// cluster, named after its hash as its Deployments are, so that a change starts a new cluster with
// its own ConfigMap and the old one goes with the old cluster. Each file is mounted over the one of
// the same name in the image's conf directory; the rest of the directory stays the image's, where
// the entrypoint writes Flink's configuration.

const (
	// FlinkConfDir is the conf directory of the official Flink images.
	FlinkConfDir = "/opt/flink/conf"
	// logConfigVolume is the volume the files are mounted from.
	logConfigVolume = "flink-log-config"
)

// LogConfigName is the ConfigMap of the logging configuration of the owner's cluster with this hash.
func LogConfigName(owner, hash string) string { return owner + "-" + hash + "-log" }

// logConfig is the ConfigMap of the owner's logging configuration; nil when it sets none.
func logConfig(o *ClusterOwner, hash string) *corev1.ConfigMap {
	files := o.Spec.LogConfiguration
	if len(files) == 0 {
		return nil
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: objectMeta(o, LogConfigName(o.Name, hash), objectLabels(o, map[string]string{AppLabel: o.Name, HashLabel: hash})),
		Data:       maps.Clone(files),
	}
}

// mountLogConfig mounts the owner's logging configuration files into every container of a pod
// that runs Flink (the main one), each over the image's file of its name.
func mountLogConfig(o *ClusterOwner, hash string, spec *corev1.PodSpec) {
	files := o.Spec.LogConfiguration
	if len(files) == 0 || len(spec.Containers) == 0 {
		return
	}
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: logConfigVolume, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: LogConfigName(o.Name, hash)}},
	}})
	main := &spec.Containers[0]
	for _, name := range slices.Sorted(maps.Keys(files)) {
		main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{
			Name: logConfigVolume, MountPath: path.Join(FlinkConfDir, name), SubPath: name, ReadOnly: true,
		})
	}
}
