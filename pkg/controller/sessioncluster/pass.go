package sessioncluster

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// KindName is the kind's name, as keys across kinds name it.
const KindName = v1beta1.FlinkSessionClusterKind

// Pass is one pass of one FlinkSessionCluster.
type Pass struct {
	*kindpass.Pass
	// Cluster is the working copy, whose status the handlers change; cached is the object as read.
	Cluster, cached *v1beta1.FlinkSessionCluster
	// Jobs are the FlinkSessionJobs that name the cluster.
	Jobs []*v1beta1.FlinkSessionJob
	// OtherShardJobs are the FlinkSessionJobs of other shards that name the cluster, read only when
	// the cluster is about to remove a Flink cluster or its finalizer (kindpass/shard.go).
	OtherShardJobs []*v1beta1.FlinkSessionJob
}

// newPass is a pass of the cluster as read (cached), working on the copy working.
func newPass(ctx context.Context, e *kindpass.Environment, cached, working *v1beta1.FlinkSessionCluster) *Pass {
	p := &Pass{cached: cached, Cluster: working}
	p.Pass = kindpass.NewPass(ctx, &fsm.Pass{Config: e.Config, Now: e.Clock.Now()}, e, KindName, true, patch)
	p.Kind = p
	return p
}

// patch sends a merge patch to the session cluster, to its status when status is set.
func patch(p *kindpass.Pass, b []byte, status ...string) (metav1.Object, error) {
	return p.Env.Apps.FlinkV1beta1().FlinkSessionClusters(p.Meta.Namespace).Patch(
		p, p.Meta.Name, types.MergePatchType, b, metav1.PatchOptions{FieldManager: kindpass.FieldManager}, status...)
}

// What the shared job phases ask of a kind (lifecycle.Kind). A session cluster owns no job: its
// table holds none of the shared job phases (TestASessionClusterRunsNoSharedJobPhase), and its
// answers are those of an object with no job.

func (p *Pass) RunConfig(string) v1beta1.FlinkConfig         { return p.cached.Spec.FlinkConfig }
func (p *Pass) OtherVersion(string) (string, bool)           { return "", false }
func (p *Pass) Beside() bool                                 { return false }
func (p *Pass) ForcedRollback() bool                         { return false }
func (p *Pass) RescalingInPlace() bool                       { return false }
func (p *Pass) RecordsCandidateCheckpoints() bool            { return false }
func (p *Pass) DeriveStatus()                                {}
func (p *Pass) SummarizeKind()                               {}
func (p *Pass) KeepJobGivenUpOn()                            {}
func (p *Pass) RestoreByHand() string                        { return "" }
func (p *Pass) Follows(fsm.Phase) []v1beta1.SavepointPurpose { return nil }
func (p *Pass) HoldDelete(*v1beta1.DeploymentRecord) (fsm.Outcome, bool) {
	return fsm.Outcome{}, false
}

// ReleaseObject deletes the HA ConfigMaps the cluster's Flink clusters left, then removes the
// finalizer: what its own Deleting handler does once no session job names it.
func (p *Pass) ReleaseObject() (fsm.Outcome, bool) {
	if out, waiting := kindpass.RemoveHAConfigMapsBeforeFinalizer(p.Pass); waiting {
		return out, true
	}
	if err := p.RemoveFinalizer(); err != nil {
		return fsm.Failed(err), true
	}
	return fsm.Outcome{}, false
}
func (p *Pass) BeforeRun(*v1beta1.DeploymentRecord, string) (fsm.Outcome, bool) {
	return fsm.Outcome{}, false
}

// Poll is how soon the phase looks again when its handler does not say.
func (p *Pass) Poll(phase fsm.Phase) func(*config.Config) time.Duration { return table[phase].Poll }
