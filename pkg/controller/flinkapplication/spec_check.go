package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// The checks a spec passes before anything of its deploy is created. The CRDs' schema and CEL
// rules refuse most nonsense at apply time; these catch what CEL cannot read (flinkConfig) and
// objects stored before a rule existed, so that they end in DeployFailed naming the field instead of
// a cluster that never starts.

// applicationSpecError names the first field of a FlinkApplication's spec that cannot deploy: its
// cluster must render, and its job must be able to run as asked.
func applicationSpecError(rc *Context) error {
	if _, err := flink.RenderCluster(rc.App, rc.Hash, ""); err != nil {
		return err
	}
	return flink.CheckJob(rc.App)
}

// clusterRefusal is why no object may be created from owner's spec now (clusters.PodPolicy.Refusal).
func clusterRefusal(rc *Context, owner flink.ClusterOwner) error {
	return stepError(rc.PodPolicy.Refusal(rc, rc.Meta.Namespace, owner))
}

// podPolicyError applies the pod policy its Namespace's annotations set (clusters.PodPolicy). It is
// read at each deploy, not each pass, through the Namespace cache.
func podPolicyError(rc *Context) error { return podPolicyErrorOf(rc, rc.ClusterOwner) }

// podPolicyErrorOf is podPolicyError for the cluster owner given: the object as its spec is, or as
// a deployment record has it.
func podPolicyErrorOf(rc *Context, owner flink.ClusterOwner) error {
	return stepError(rc.PodPolicy.Check(rc, rc.Meta.Namespace, owner))
}
