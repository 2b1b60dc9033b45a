package sessionjob

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// KindName is the kind's name, as keys across kinds name it.
const KindName = v1beta1.FlinkSessionJobKind

// Memory is what the kind keeps between passes: its jars' transfers, which run off the workers.
type Memory struct {
	fetches jarFetches
}

// Settle waits until no transfer runs: tests that replay a run step by step call it where a
// transfer must have ended, so that its end does not fall at a point the scheduler picks.
func (m *Memory) Settle() { m.fetches.settle() }

// Pass is one pass of one FlinkSessionJob.
type Pass struct {
	*kindpass.Pass
	// Object is the FlinkSessionJob as read; the pass works on a copy (the subject's).
	Object *v1beta1.FlinkSessionJob
	// ClusterName is the FlinkSessionCluster the job names; Cluster is that cluster, nil when it
	// does not exist.
	ClusterName string
	Cluster     *v1beta1.FlinkSessionCluster
	// ClusterHAConfigMaps names the ConfigMaps Flink's Kubernetes HA services left of the session
	// cluster's Flink clusters, by cluster hash (keepsJobs).
	ClusterHAConfigMaps map[string][]string

	memory *Memory
}

// newPass is a pass of the session job as read.
func newPass(ctx context.Context, e *kindpass.Environment, m *Memory, job *v1beta1.FlinkSessionJob) *Pass {
	p := &Pass{Object: job, ClusterName: job.Spec.ClusterName, memory: m}
	p.Pass = kindpass.NewPass(ctx, &fsm.Pass{Config: e.Config, Now: e.Clock.Now()}, e, KindName, true, patch)
	p.Kind = p
	p.KeepsJobs = func(hash string) bool { return keepsJobs(p, hash) }
	return p
}

// patch sends a merge patch to the session job, to its status when status is set.
func patch(p *kindpass.Pass, b []byte, status ...string) (metav1.Object, error) {
	return p.Env.Apps.FlinkV1beta1().FlinkSessionJobs(p.Meta.Namespace).Patch(
		p, p.Meta.Name, types.MergePatchType, b, metav1.PatchOptions{FieldManager: kindpass.FieldManager}, status...)
}

// What the shared job phases ask of the kind (lifecycle.Kind). A session job runs one version of
// its job at a time, on its session cluster.

// RunConfig is the Flink configuration the job with this id was started with (runConfigOfJob).
func (p *Pass) RunConfig(jobID string) v1beta1.FlinkConfig { return runConfigOfJob(p, jobID) }

// OtherVersion: a session job runs no versions side by side.
func (p *Pass) OtherVersion(string) (string, bool) { return "", false }

// Beside: no new version runs beside the live one.
func (p *Pass) Beside() bool { return false }

// ForcedRollback: a session job has no forceRollback.
func (p *Pass) ForcedRollback() bool { return false }

// RescalingInPlace: a session job does not rescale in place.
func (p *Pass) RescalingInPlace() bool { return false }

// RecordsCandidateCheckpoints: a session job's candidate has its checkpoints recorded while it
// starts (attack review s5).
func (p *Pass) RecordsCandidateCheckpoints() bool {
	return p.Job != nil && jobstate.Candidate(p.Job) != nil
}

// DeriveStatus writes the job's fields of status derived from its records and ledger.
func (p *Pass) DeriveStatus() { jobstate.DeriveJobStatus(p.Job) }

// SummarizeKind: a session job shows nothing beyond its job.
func (p *Pass) SummarizeKind() {}

// KeepJobGivenUpOn keeps the job given up on as the session job's, as it started
// (lifecycle.Pass.KeepGivenUpJob).
func (p *Pass) KeepJobGivenUpOn() { p.KeepGivenUpJob(true) }

// RestoreByHand says how the user names the state a job starts from when the restore policy
// cannot choose it.
func (p *Pass) RestoreByHand() string {
	return fmt.Sprintf("name the state to start from by hand (spec.job.initialSavepointPath, with a new %s)",
		p.Settings.Field("savepointRedeployNonce"))
}

// Follows are the savepoints that the kind's handler of the phase follows itself.
func (p *Pass) Follows(phase fsm.Phase) []v1beta1.SavepointPurpose { return table[phase].Follows }

// Poll is how soon the phase looks again when its handler does not say.
func (p *Pass) Poll(phase fsm.Phase) func(*config.Config) time.Duration { return table[phase].Poll }

// HoldDelete holds the delete of a session job with deleteMode None until its cluster lists the job
// it leaves running (leftJobWaits).
func (p *Pass) HoldDelete(rec *v1beta1.DeploymentRecord) (fsm.Outcome, bool) {
	if p.Settings.DeleteMode == v1beta1.DeleteModeNone {
		return leftJobWaits(p, rec)
	}
	return fsm.Outcome{}, false
}

// ReleaseObject removes the finalizer once the delete dealt with the job.
func (p *Pass) ReleaseObject() (fsm.Outcome, bool) {
	if out, waiting := kindpass.RemoveHAConfigMapsBeforeFinalizer(p.Pass); waiting {
		return out, true
	}
	if err := p.RemoveFinalizer(); err != nil {
		return fsm.Failed(err), true
	}
	return fsm.Outcome{}, false
}
