package clusters

import (
	"context"
	"fmt"
	"math"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// PodPolicy reads the pod policy a cluster's Namespace sets in its annotations (see
// flink.PodPolicy) and holds a cluster's spec to it: the same rules as the
// ValidatingAdmissionPolicy in deploy/, so that a cluster without that policy installed is safe
// too. The Namespace is read at each deploy, not each pass, through Namespaces.
type PodPolicy struct {
	Kube       kubernetes.Interface
	Namespaces *NamespaceCache
	Clock      clock.PassiveClock
	// AdmissionPolicyEnforced is the operator's configuration: secret references were checked
	// against their writer by the admission policy only where that policy enforces; elsewhere
	// nothing checked them.
	AdmissionPolicyEnforced bool
}

// Check applies the pod policy of the namespace to the cluster owner given: the object as its spec
// is, or as a deployment record has it.
func (p PodPolicy) Check(ctx context.Context, namespace string, owner flink.ClusterOwner) error {
	ns, err := p.Namespaces.Get(ctx, p.Kube, p.Clock, namespace)
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
		// A namespace-scoped install may not read Namespaces: the restricted policy applies.
		ns = nil
	case err != nil:
		return retryable("ReadPodPolicy", err)
	}
	policy := flink.PodPolicyFrom(ns)
	policy.AdmissionPolicyEnforced = p.AdmissionPolicyEnforced
	if err := policy.CheckCluster(owner); err != nil {
		return permanent("PodPolicy", err)
	}
	return nil
}

// Refusal is why no object may be created from owner's spec now, whichever path asks (a deploy,
// the repair of an object someone deleted): the checks a deploy makes of a cluster's spec, the pod
// policy included, as they stand now. A spec they refused creates nothing until it changes and
// passes; rendering (flink.RenderCluster) refuses the rest.
func (p PodPolicy) Refusal(ctx context.Context, namespace string, owner flink.ClusterOwner) error {
	if err := SlotsFit(owner); err != nil {
		return permanent("CheckSpec", err)
	}
	return p.Check(ctx, namespace, owner)
}

// SlotsFit refuses a cluster of more task slots than Flink counts: only a session cluster's
// replicas can ask for one (an application's parallelism is bounded far below).
func SlotsFit(o flink.ClusterOwner) error {
	replicas, slots := int64(o.TaskManagers), int64(o.TaskSlots())
	if replicas*slots > math.MaxInt32 {
		return fmt.Errorf("spec.taskManagerConfig.replicas %d × taskSlots %d is more task slots than Flink counts (%d at most)",
			replicas, slots, math.MaxInt32)
	}
	return nil
}
