package flink

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Flink's Kubernetes HA services keep a cluster's leader addresses, job graphs and checkpoint
// pointers in ConfigMaps that the JobManager creates itself, named after kubernetes.cluster-id and
// labelled with it. Flink gives them no owner, on purpose: they outlive the cluster's Deployments so
// that a new JobManager of the same cluster id can recover its jobs. Each cluster the operator
// renders has a cluster id of its own (RenderFlinkConfig), so every update of an application with
// HA leaves the previous cluster's ConfigMaps behind unless somebody removes them.
const (
	// FlinkObjectLabel and FlinkObject mark the Kubernetes objects Flink creates itself, in every
	// release: in a standalone cluster, as the operator runs them, only the HA services' ConfigMaps.
	FlinkObjectLabel = "type"
	FlinkObject      = "flink-native-kubernetes"
	// HAConfigMapTypeLabel and HAConfigMapType mark the HA ConfigMaps of Flink 1.x only: Flink 2.x
	// writes them without (real 2.3 labels them app and type alone). Where the label is set, it
	// must say high-availability.
	HAConfigMapTypeLabel = "configmap-type"
	HAConfigMapType      = "high-availability"
	// HAClusterIDLabel holds the cluster id of the Flink cluster an HA ConfigMap belongs to.
	HAClusterIDLabel = "app"
)

// HAConfigMapSelector selects the ConfigMaps Flink creates, of every cluster and release: a cluster's
// HA ConfigMaps are among them (HAConfigMapCluster tells which are).
const HAConfigMapSelector = FlinkObjectLabel + "=" + FlinkObject

// HAConfigMapsOf is the label selector of the HA ConfigMaps of one cluster id, for the commands
// the operator's messages suggest.
func HAConfigMapsOf(clusterID string) string {
	return HAConfigMapSelector + "," + HAClusterIDLabel + "=" + clusterID
}

// HAClusterIDOf is the cluster id of owner's cluster with this hash: Flink names and labels that
// cluster's HA ConfigMaps after it.
func HAClusterIDOf(owner, hash string) string { return VersionedServiceNameOf(owner, hash) }

// HAConfigMapCluster reads, from an HA ConfigMap's labels and name, the owner and the hash of the
// cluster the operator rendered it for: its cluster id is "<owner>-<hash>" with a hash of eight hex
// digits, and Flink names each of the cluster's HA ConfigMaps "<cluster id>-..." ("-cluster-config-map",
// "-<job id>-config-map"). It returns false for a ConfigMap of any other cluster, and for another
// object Flink made (a 1.x ConfigMap labelled with another configmap-type). The cluster id is also
// the name of the cluster's versioned Service, which the operator owns, so another Flink cluster in
// the namespace would have to take a name the operator uses to be mistaken for one of its own.
func HAConfigMapCluster(m metav1.Object) (owner, hash string, ok bool) {
	labels := m.GetLabels()
	if labels[FlinkObjectLabel] != FlinkObject {
		return "", "", false
	}
	if t, set := labels[HAConfigMapTypeLabel]; set && t != HAConfigMapType {
		return "", "", false
	}
	id := labels[HAClusterIDLabel]
	i := strings.LastIndexByte(id, '-')
	if i <= 0 || !isClusterHash(id[i+1:]) || !strings.HasPrefix(m.GetName(), id+"-") {
		return "", "", false
	}
	return id[:i], id[i+1:], true
}

// isClusterHash tells whether s has the form of hashOf's result.
func isClusterHash(s string) bool {
	if len(s) != 8 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
