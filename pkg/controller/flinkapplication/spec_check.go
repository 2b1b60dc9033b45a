package flinkapplication

import (
	"fmt"
	"math"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
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

// sessionClusterSpecError names the first field of a FlinkSessionCluster's spec that cannot deploy.
// Its replicas × taskSlots must be a task slot count Flink can hold.
func sessionClusterSpecError(rc *Context) error {
	if err := slotsFit(rc.ClusterOwner); err != nil {
		return err
	}
	_, err := rc.ClusterOwner.RenderCluster(rc.Hash, "")
	return err
}

// slotsFit refuses a cluster of more task slots than Flink counts: only a session cluster's
// replicas can ask for one (an application's parallelism is bounded far below).
func slotsFit(o flink.ClusterOwner) error {
	replicas, slots := int64(o.TaskManagers), int64(o.TaskSlots())
	if replicas*slots > math.MaxInt32 {
		return fmt.Errorf("spec.taskManagerConfig.replicas %d × taskSlots %d is more task slots than Flink counts (%d at most)",
			replicas, slots, math.MaxInt32)
	}
	return nil
}

// clusterRefusal is why no object may be created from owner's spec now, whichever path asks (a
// deploy, the repair of an object someone deleted): the checks a deploy makes of a cluster's spec,
// the pod policy included, as they stand now. A spec they refused creates nothing until it changes
// and passes; rendering (flink.RenderCluster) refuses the rest.
func clusterRefusal(rc *Context, owner flink.ClusterOwner) error {
	if err := slotsFit(owner); err != nil {
		return jobs.Permanent("CheckSpec", err)
	}
	return podPolicyErrorOf(rc, owner)
}

// podPolicyError applies the pod policy its Namespace's annotations set (see flink.PodPolicy), the same rules as the
// ValidatingAdmissionPolicy in deploy/, so that a cluster without that policy installed is safe
// too. It is read at each deploy, not each pass, through namespaceCache.
func podPolicyError(rc *Context) error { return podPolicyErrorOf(rc, rc.ClusterOwner) }

// podPolicyErrorOf is podPolicyError for the cluster owner given: the object as its spec is, or as
// a deployment record has it.
func podPolicyErrorOf(rc *Context, owner flink.ClusterOwner) error {
	ns, err := rc.env.namespaces.Get(rc, rc.env.Kube, rc.env.Clock, rc.Meta.Namespace)
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
		// A namespace-scoped install may not read Namespaces: the restricted policy applies.
		ns = nil
	case err != nil:
		return jobs.Retryable("ReadPodPolicy", err)
	}
	policy := flink.PodPolicyFrom(ns)
	// Secret references were checked against their writer by the admission policy only where the
	// operator's configuration says that policy enforces; elsewhere nothing checked them.
	policy.AdmissionPolicyEnforced = rc.Config.AdmissionPolicyEnforced
	if err := policy.CheckCluster(owner); err != nil {
		return jobs.Permanent("PodPolicy", err)
	}
	return nil
}
