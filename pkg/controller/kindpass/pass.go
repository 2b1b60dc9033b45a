package kindpass

import (
	"context"
	"encoding/json"

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

// Pass is the part of one pass of one object that no kind owns: what every kind's pass knows
// (lifecycle.Pass), the environment it runs in, and the little a kind tells the steps around its
// handler. A kind's pass type embeds it.
type Pass struct {
	*lifecycle.Pass
	Env *Environment
	// KeepsJobs tells, for a session job, whether Flink HA brings the jobs of the cluster with this
	// hash back with its JobManager; nil for a kind whose clusters take their jobs with them.
	KeepsJobs func(hash string) bool
	// OwnHashes adds the clusters that only the kind's own status names to those the object owns
	// (OwnClusterHashes); nil when there are none.
	OwnHashes func(own map[string]bool)
}

// Kind is how a kind's pass reaches its Pass.
type Kind interface {
	Base() *Pass
}

// Base is the pass itself, for a kind's pass type that embeds it.
func (p *Pass) Base() *Pass { return p }

// NewPass is a pass of the kind of that name over the machine's part m. patch sends a merge patch
// to the object, to its status when status is set; sharedCluster says that other objects' jobs run
// on the object's clusters (a session cluster's).
func NewPass(ctx context.Context, m *fsm.Pass, e *Environment, kind string, sharedCluster bool,
	patch func(p *Pass, patch []byte, status ...string) (metav1.Object, error)) *Pass {
	p := &Pass{Pass: &lifecycle.Pass{Context: ctx, Pass: m}, Env: e}
	p.NewFlink = p.newFlinkPass
	p.Guardian = func(disposing bool) (*guardian.Namespace, error) { return StateGuardian(p, disposing) }
	p.KindName, p.SharedCluster = kind, sharedCluster
	if patch != nil {
		p.Patch = func(b []byte, status ...string) (metav1.Object, error) { return patch(p, b, status...) }
	}
	if e != nil {
		p.Book, p.BookPage, p.Looks, p.Apps, p.FieldManager = e.Book, e.bookPage, &e.Looks, e.Apps, FieldManager
		p.Kube, p.Fence = e.Kube, e.Acting
		p.PodPolicy = clusters.PodPolicy{Kube: e.Kube, Namespaces: &e.namespaces, Clock: e.Clock}
		if e.Config != nil {
			p.PodPolicy.AdmissionPolicyEnforced = e.Config.AdmissionPolicyEnforced
		}
	}
	return p
}

// JobManagerGoneForGood tells whether the JobManager of the cluster with this hash is gone and
// takes its jobs with it: positive evidence that they stopped. A session cluster's JobManager that
// Flink HA brings back under the same hash with its jobs is no such evidence (KeepsJobs): every
// handler waits for it, not only Running's (explorer seed 1210633: a session job's cancel took the
// job for cancelled as its JobManager Deployment was deleted, HA recovered it on the recreated
// JobManager, and the update ran a second job beside it).
func (p *Pass) JobManagerGoneForGood(hash string) bool {
	if !p.Clusters[hash].JobManagerGone() {
		return false
	}
	return p.KeepsJobs == nil || !p.KeepsJobs(hash)
}

// newFlinkPass makes the pass's view of Flink: it reaches each cluster through its own Service,
// and none whose Service a tenant pointed elsewhere; it speaks the Flink release each cluster runs.
func (p *Pass) newFlinkPass() *jobs.Pass {
	f := jobs.NewPass(p, p.Env.Flink, p.Now, jobs.Clusters{
		URL:            p.jobManagerAddress,
		JobManagerGone: p.JobManagerGoneForGood,
		FlinkVersion:   p.FlinkVersion,
		ApplicationOf:  p.applicationOf,
		Refusal: func(hash string) error {
			return p.Env.JobManagerRoute(p.ClusterOwner, hash, p.Clusters[hash], p.Now)
		},
	})
	if p.Env.Acting != nil {
		f.FenceWith(p.Env.Acting)
	}
	f.InOrder = p.Env.ReadsInOrder
	return f
}

// FlinkURL is the REST base URL of the cluster with this hash, as the pass's view of Flink hands
// it out: a call through the pass to a cluster whose Service is refused is not sent (routes.go).
func (p *Pass) FlinkURL(hash string) string { return p.Flink().URL(hash) }

// jobManagerAddress is the REST base URL of the cluster with this hash: through its Service.
func (p *Pass) jobManagerAddress(hash string) string {
	o := p.ClusterOwner
	return p.Env.FlinkURL(o.Namespace, flink.VersionedServiceNameOf(o.Name, hash), o.UIPort())
}

// applicationOf is the Flink application a job of the cluster runs in, as the record of that very
// job names it: "" when it is the job's own id.
func (p *Pass) applicationOf(hash, jobID string) string {
	if p.Job == nil {
		return ""
	}
	for _, rec := range []*v1beta1.DeploymentRecord{jobstate.Stable(p.Job), jobstate.Candidate(p.Job)} {
		if rec != nil && rec.ClusterHash == hash && rec.JobID == jobID {
			return rec.ApplicationID
		}
	}
	return ""
}

// FlinkVersion is the Flink release the cluster with this hash runs: the flinkVersion of the spec
// its deployment record deployed, so that an update to another release still speaks the old
// release to the old job; else the cluster owner's.
func (p *Pass) FlinkVersion(hash string) string {
	if p.Job != nil {
		for _, rec := range []*v1beta1.DeploymentRecord{jobstate.Stable(p.Job), jobstate.Candidate(p.Job)} {
			if rec == nil || rec.ClusterHash != hash {
				continue
			}
			if v := p.recordedVersion(hash, rec.Spec); v != "" {
				return v
			}
		}
	}
	return p.ClusterOwner.Spec.FlinkVersion
}

// recordedVersion is the flinkVersion of the spec of the record of the cluster with hash; "" when
// it has none.
func (p *Pass) recordedVersion(hash, spec string) string {
	if p.Env == nil {
		var decoded struct {
			FlinkVersion string `json:"flinkVersion"`
		}
		_ = json.Unmarshal([]byte(spec), &decoded)
		return decoded.FlinkVersion
	}
	return p.Env.Versions.Of(p.Key(), hash, spec)
}
