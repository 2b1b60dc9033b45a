package kindpass

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// No call goes to a JobManager through a Service that does not route as the operator rendered it
// (clusters.Routes, which says why). The pass puts back a Service the object controls and says which
// and why.

// RefusedServiceReason is the reason of the Event and of the Ready condition that say a cluster's
// Service was refused.
const RefusedServiceReason = "JobManagerServiceRefused"

// JobManagerRoute is nil when the operator may call the JobManager of the owner's cluster with this
// hash, c being what the pass observed of that cluster; otherwise why it may not, as a retryable
// step of the job core: such a call fails unsent, as a JobManager that does not answer, so nothing
// is started again or given up on the job's account (its phase deadline still runs).
func (e *Environment) JobManagerRoute(owner flink.ClusterOwner, hash string, c *clusters.Objects, now time.Time) error {
	var svc *corev1.Service
	if c != nil {
		svc = c.Service
	}
	if r := e.routes.Check(owner, hash, svc, now); r != nil {
		return jobs.Retryable("JobManagerRoute", r)
	}
	return nil
}

// guardJobManagerServices runs before the pass reads anything of Flink. For each owned cluster whose
// Service routes elsewhere, it says so (an Event naming the Service and the field) and, when the
// object owns the cluster and its JobManager Deployment exists, puts back the Service the operator
// renders: deleted (this very object, by its UID) and created again, since a Service made an
// ExternalName and back cannot be made headless again in place. A session job only says so: its cluster's own pass
// repairs. The pass then shows the refusal in its Ready condition (showRefusedServices).
func guardJobManagerServices(p *Pass) {
	for _, hash := range slices.Sorted(maps.Keys(p.Clusters)) {
		c := p.Clusters[hash]
		if c.Service == nil {
			continue
		}
		problem := p.ClusterOwner.JobManagerServiceProblem(c.Service, hash)
		if problem == "" {
			continue
		}
		name := p.Meta.Namespace + "/" + c.Service.Name
		p.Env.routes.Note(name, problem, p.Now)
		msg := fmt.Sprintf("Service %s of Flink cluster %s %s: no call goes to its JobManager through it", name, hash, problem)
		if p.Owned != nil && c.JobManager != nil {
			if err := replaceJobManagerService(p, hash, c.Service); err != nil {
				msg += fmt.Sprintf("; putting back the Service the operator renders failed: %v", err)
			} else {
				msg += "; it was replaced by the Service the operator renders"
			}
		}
		p.Event(true, RefusedServiceReason, msg)
	}
}

// replaceJobManagerService puts back the Service the operator renders (clusters.ReplaceJobManagerService).
func replaceJobManagerService(p *Pass, hash string, have *corev1.Service) error {
	created, err := clusters.ReplaceJobManagerService(p, p.Writer(), p.ClusterOwner, hash, have)
	if err != nil {
		return lifecycle.StepError(err)
	}
	p.Clusters[hash].Service = created
	return nil
}

// showRefusedServices makes the Ready condition say, after the pass summarized its status, that a
// cluster's Service was refused, naming it: whatever else the object waits on, nothing of its job
// can be known until that changes.
func showRefusedServices(p *Pass) {
	for _, hash := range slices.Sorted(maps.Keys(p.Clusters)) {
		err := p.Env.JobManagerRoute(p.ClusterOwner, hash, p.Clusters[hash], p.Now)
		var r *clusters.RouteRefusal
		if errors.As(err, &r) && r.Tampered {
			fsm.SetCondition(p.Machine, metav1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse,
				Reason: RefusedServiceReason, ObservedGeneration: p.Meta.Generation, Message: r.Error()}, p.Now)
			return
		}
	}
}
