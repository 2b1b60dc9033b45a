package clusters

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// Flink's Kubernetes HA services leave ConfigMaps behind every cluster that ran with HA (package
// flink, HAConfigMapCluster), each of an owner's clusters under a cluster id of its own. Whether
// those of a cluster may go is the caller's to decide (they may hold the only pointer to a job's
// state); here is what tells a cluster still in use, the deletes, and the words for what is left.

// haDeletesPerPass bounds the HA ConfigMaps one call deletes.
const haDeletesPerPass = 50

// HAClusterInUse tells whether the cluster with this hash may still run, or run again, from its HA
// ConfigMaps: its JobManager, Deployment or pod, is still there (c is the cluster as read, nil when
// none was), or the owner still names its hash in what it deploys or records (inUse).
func HAClusterInUse(hash string, c *Objects, inUse ...string) bool {
	for _, h := range inUse {
		if h == hash {
			return true
		}
	}
	return c != nil && (c.JobManager != nil || c.JobManagerPods > 0)
}

// JobManagersLeft tells whether a JobManager of any of the clusters, Deployment or pod, is still
// there to write its HA ConfigMaps again.
func JobManagersLeft(clusters map[string]*Objects) bool {
	running := false
	for _, c := range clusters {
		running = running || c.JobManager != nil || c.JobManagerPods > 0
	}
	return running
}

// DeleteHAConfigMaps deletes the HA ConfigMaps of the cluster with this hash of the owner named
// owner, of names at most haDeletesPerPass, and says so. It returns the names left for a later
// call: all of them when it failed.
func DeleteHAConfigMaps(ctx context.Context, w Writer, owner, hash string, names []string) ([]string, []Event, error) {
	if err := w.mayAct(); err != nil {
		return names, nil, err
	}
	all := names
	if len(names) > haDeletesPerPass {
		// A JobManager writes as many as the namespace lets it: the rest go at the next passes.
		names = names[:haDeletesPerPass]
	}
	for _, name := range names {
		err := w.Kube.CoreV1().ConfigMaps(w.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return all, nil, KubeError("DeleteHAConfigMaps", err)
		}
	}
	removed := Event{Reason: "HAConfigMapsRemoved", Message: fmt.Sprintf("removed %d Flink HA ConfigMaps of cluster %s, which is gone: %s",
		len(names), flink.HAClusterIDOf(owner, hash), NamesWithin(names, 400))}
	return all[len(names):], []Event{removed}, nil
}

// NamesWithin lists names, as many as fit in max bytes, and how many more there are.
func NamesWithin(names []string, max int) string {
	var b strings.Builder
	for i, n := range names {
		if b.Len()+len(n)+2 > max {
			fmt.Fprintf(&b, " and %d more", len(names)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	return b.String()
}

// HAJobLeft names a job whose own HA ConfigMap is still there among the owner's (by cluster hash):
// Flink removes it once the job reached a terminal state, so the job is running, or was left by a
// FlinkSessionJob deleted with deleteMode None, and its HA ConfigMaps point to its newest
// checkpoint. "" when there is none.
func HAJobLeft(owner string, haConfigMaps map[string][]string) string {
	for _, hash := range slices.Sorted(maps.Keys(haConfigMaps)) {
		id := flink.HAClusterIDOf(owner, hash)
		for _, name := range haConfigMaps[hash] {
			if job, ok := strings.CutSuffix(strings.TrimPrefix(name, id+"-"), "-config-map"); ok && job != "cluster" {
				return fmt.Sprintf("Flink has not finished with job %s of cluster %s (ConfigMap %s)", job, id, name)
			}
		}
	}
	return ""
}

// HASelectors is the label selector of the owner's HA ConfigMaps (by cluster hash), for the
// commands its messages suggest: one cluster id, or a set of them.
func HASelectors(owner string, haConfigMaps map[string][]string) string {
	var ids []string
	for _, hash := range slices.Sorted(maps.Keys(haConfigMaps)) {
		ids = append(ids, flink.HAClusterIDOf(owner, hash))
	}
	if len(ids) == 1 {
		return flink.HAConfigMapsOf(ids[0])
	}
	return fmt.Sprintf("'%s,%s in (%s)'", flink.HAConfigMapSelector, flink.HAClusterIDLabel, strings.Join(ids, ","))
}
