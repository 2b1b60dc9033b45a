package flinkapplication

import (
	"context"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// Context is everything one reconcile of one application knows: the application (a working copy
// whose status handlers change), the objects it owns, and a view of Flink that asks each question at
// most once per reconcile. Handlers decide from it; they never list or watch on their own.
type Context struct {
	// Pass is what every kind's pass knows (lifecycle.Pass): the machine's part, the object's job
	// and clusters as worked on and as read, its job settings and its clusters' objects.
	*lifecycle.Pass
	// App is the working copy when the object is a FlinkApplication.
	App *v1beta1.FlinkApplication
	// GenericService is the Service that points at the live cluster, if it exists.
	GenericService *corev1.Service
	// Ingress is the application's Flink UI Ingress, if it exists.
	Ingress *networkingv1.Ingress

	// kind is what differs between the resources the machine runs: their phase table, where they
	// write, and whose cluster their jobs run on.
	kind *objectKind
	// session is what a session job or cluster knows of its counterpart; nil for a FlinkApplication.
	session *sessionState

	env *Environment
}

// newContext is a pass of the kind over the objects read, for the machine's part m.
func newContext(ctx context.Context, m *fsm.Pass, kind *objectKind, e *Environment) *Context {
	rc := &Context{Pass: &lifecycle.Pass{Context: ctx, Pass: m}, kind: kind, env: e}
	rc.NewFlink, rc.Kind = rc.newFlinkPass, rc
	rc.Guardian = func(disposing bool) (*guardian.Namespace, error) { return stateGuardian(rc, disposing) }
	if kind != nil {
		rc.KindName, rc.SharedCluster = kind.name, kind.sharedCluster
		rc.Patch = func(patch []byte, status ...string) (metav1.Object, error) { return kind.patch(rc, patch, status...) }
	}
	if e != nil {
		rc.Book, rc.BookPage, rc.Looks, rc.Apps, rc.FieldManager = e.Book, e.bookPage, &e.looks, e.Apps, fieldManager
		rc.Kube, rc.Fence = e.Kube, e.Acting
		rc.PodPolicy = clusters.PodPolicy{Kube: e.Kube, Namespaces: &e.namespaces, Clock: e.Clock}
		if e.Config != nil {
			rc.PodPolicy.AdmissionPolicyEnforced = e.Config.AdmissionPolicyEnforced
		}
	}
	return rc
}

// bind makes working the pass's object and stored the object as read.
func (rc *Context) bind(working, stored subject) { rc.Pass.Bind(working, stored) }

// jobManagerGoneForGood tells whether the JobManager of the cluster with this hash is gone and
// takes its jobs with it: positive evidence that they stopped. A session cluster's JobManager that
// Flink HA brings back under the same hash with its jobs is no such evidence (haKeepsJobs): every
// handler waits for it, not only Running's (explorer seed 1210633: a session job's cancel took the
// job for cancelled as its JobManager Deployment was deleted, HA recovered it on the recreated
// JobManager, and the update ran a second job beside it).
func (rc *Context) jobManagerGoneForGood(hash string) bool {
	if !rc.Clusters[hash].JobManagerGone() {
		return false
	}
	return !isSessionJob(rc) || !haKeepsJobs(rc, hash)
}

// newFlinkPass makes the pass's view of Flink: it reaches each cluster through its own Service,
// and none whose Service a tenant pointed elsewhere; it speaks the Flink release each cluster runs.
func (rc *Context) newFlinkPass() *jobs.Pass {
	p := jobs.NewPass(rc, rc.env.Flink, rc.Now, jobs.Clusters{
		URL:            rc.jobManagerAddress,
		JobManagerGone: rc.jobManagerGoneForGood,
		FlinkVersion:   rc.FlinkVersion,
		ApplicationOf:  rc.applicationOf,
		Refusal: func(hash string) error {
			return rc.env.jobManagerRoute(rc.ClusterOwner, hash, rc.Clusters[hash], rc.Now)
		},
	})
	if rc.env.Acting != nil {
		p.FenceWith(rc.env.Acting)
	}
	p.InOrder = rc.env.ReadsInOrder
	return p
}

// FlinkURL is the REST base URL of the cluster with this hash, as the pass's view of Flink hands
// it out: a call through the pass to a cluster whose Service is refused is not sent
// (jobmanager_routes.go).
func (rc *Context) FlinkURL(hash string) string { return rc.Flink().URL(hash) }

// jobManagerAddress is the REST base URL of the cluster with this hash: through its Service.
func (rc *Context) jobManagerAddress(hash string) string {
	o := rc.ClusterOwner
	return rc.env.FlinkURL(o.Namespace, flink.VersionedServiceNameOf(o.Name, hash), o.UIPort())
}

// applicationOf is the Flink application a job of the cluster runs in, as the record of that very
// job names it: "" when it is the job's own id.
func (rc *Context) applicationOf(hash, jobID string) string {
	if rc.Job == nil {
		return ""
	}
	for _, rec := range []*v1beta1.DeploymentRecord{jobstate.Stable(rc.Job), jobstate.Candidate(rc.Job)} {
		if rec != nil && rec.ClusterHash == hash && rec.JobID == jobID {
			return rec.ApplicationID
		}
	}
	return ""
}

// FlinkVersion is the Flink release the cluster with this hash runs: the flinkVersion of the spec
// its deployment record deployed, so that an update to another release still speaks the old
// release to the old job; else the cluster owner's.
func (rc *Context) FlinkVersion(hash string) string {
	if rc.Job != nil {
		for _, rec := range []*v1beta1.DeploymentRecord{jobstate.Stable(rc.Job), jobstate.Candidate(rc.Job)} {
			if rec == nil || rec.ClusterHash != hash {
				continue
			}
			if v := rc.recordedVersion(hash, rec.Spec); v != "" {
				return v
			}
		}
	}
	return rc.ClusterOwner.Spec.FlinkVersion
}

// recordedVersion is the flinkVersion of the spec of the record of the cluster with hash; "" when
// it has none.
func (rc *Context) recordedVersion(hash, spec string) string {
	if rc.env == nil {
		var decoded struct {
			FlinkVersion string `json:"flinkVersion"`
		}
		_ = json.Unmarshal([]byte(spec), &decoded)
		return decoded.FlinkVersion
	}
	return rc.env.versions.Of(rc.Key(), hash, spec)
}
