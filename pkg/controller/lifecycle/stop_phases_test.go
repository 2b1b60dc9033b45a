package lifecycle

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testclock "k8s.io/utils/clock/testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// The job phases every kind shares, driven pass by pass over one simulated JobManager and a fake
// clock, as a kind's table would run them: no Kubernetes, no kind.

// bench is one simulated JobManager, the job running on it, and the status of the object that owns it.
type bench struct {
	t        *testing.T
	clock    *testclock.FakeClock
	jm       *flinksim.JobManager
	api      client.API
	url      string
	status   *v1beta1.JobOwnerStatus
	machine  *v1beta1.MachineStatus
	settings *jobstate.Settings
	looks    jobstate.Looks
	kind     stubKind
	events   []string
}

// stubKind is a kind with no versions side by side, whose jobs run with the bench's configuration.
type stubKind struct{ config v1beta1.FlinkConfig }

func (k stubKind) RunConfig(string) v1beta1.FlinkConfig { return k.config }
func (stubKind) OtherVersion(string) (string, bool)     { return "", false }
func (stubKind) Beside() bool                           { return false }
func (stubKind) ForcedRollback() bool                   { return false }
func (stubKind) KeepJobGivenUpOn()                      {}
func (stubKind) HoldDelete(*v1beta1.DeploymentRecord) (fsm.Outcome, bool) {
	return fsm.Outcome{}, false
}
func (stubKind) ReleaseObject() (fsm.Outcome, bool)                { return fsm.Outcome{}, false }
func (stubKind) DeriveStatus()                                     {}
func (stubKind) SummarizeKind()                                    {}
func (stubKind) RescalingInPlace() bool                            { return false }
func (stubKind) RecordsCandidateCheckpoints() bool                 { return false }
func (stubKind) Poll(fsm.Phase) func(*config.Config) time.Duration { return fsm.WaitPoll }
func (stubKind) Follows(fsm.Phase) []v1beta1.SavepointPurpose      { return nil }
func (stubKind) BeforeRun(*v1beta1.DeploymentRecord, string) (fsm.Outcome, bool) {
	return fsm.Outcome{}, false
}
func (stubKind) RestoreByHand() string { return "name the state by hand" }

func newBench(t *testing.T, retention string) *bench {
	clk := testclock.NewFakeClock(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))
	raw := map[string]string{
		"state.savepoints.dir": "s3://b/savepoints", "state.checkpoints.dir": "s3://b/checkpoints",
		"taskmanager.numberOfTaskSlots": "2", "execution.checkpointing.interval": "10s",
		"execution.checkpointing.externalized-checkpoint-retention": retention,
	}
	conf := v1beta1.FlinkConfig{}
	for k, v := range raw {
		conf[k] = v
	}
	jm := flinksim.NewJobManager(flinksim.Options{Clock: clk, TaskManagers: 2, FlinkConfig: raw})
	srv := httptest.NewServer(jm.Handler())
	t.Cleanup(srv.Close)
	b := &bench{t: t, clock: clk, jm: jm, api: client.New(client.DefaultConfig(), nil), url: srv.URL,
		status: &v1beta1.JobOwnerStatus{}, machine: &v1beta1.MachineStatus{}, kind: stubKind{config: conf},
		settings: &jobstate.Settings{UpgradeMode: v1beta1.UpgradeModeLastState, Field: func(n string) string { return "spec." + n }}}
	b.runJob()
	return b
}

// runJob starts the owner's job through the job core and records it as the stable deployment's.
func (b *bench) runJob() {
	owner := jobs.Owner{Name: "FlinkApplication/ns/wc", UID: "u1"}
	job := &jobs.Job{Cluster: "c"}
	for range 50 {
		step := b.flink().Run(owner, job, jobs.Submission{JarID: "wc.jar", Parallelism: 2},
			jobs.RunLimits{SubmitGracePeriod: 30 * time.Second, Stabilization: 2 * time.Second})
		require.Empty(b.t, step.Failure)
		if step.Running {
			b.status.Deployments.Stable = &v1beta1.DeploymentRecord{SpecHash: "s1", ClusterHash: "c", JobID: job.ID}
			// An update to spec s2, on a cluster of its own that is not up yet.
			b.status.Deployments.Candidate = &v1beta1.DeploymentRecord{Kind: v1beta1.DeploymentUpdate, SpecHash: "s2", ClusterHash: "c2"}
			b.status.JobStatus.JobID, b.status.JobStatus.ClusterHash = job.ID, "c"
			return
		}
		b.clock.Step(500 * time.Millisecond)
	}
	b.t.Fatal("the job never ran stable")
}

func (b *bench) flink() *jobs.Pass {
	return jobs.NewPass(context.Background(), b.api, b.clock.Now(), jobs.Clusters{
		URL:            func(string) string { return b.url },
		JobManagerGone: func(string) bool { return false },
	})
}

// pass is a new pass of the owner over the bench, whose spec is s2.
func (b *bench) pass() *Pass {
	meta := &metav1.ObjectMeta{Namespace: "ns", Name: "wc", Finalizers: []string{Finalizer}}
	p := &Pass{Context: context.Background(), Pass: &fsm.Pass{Meta: meta, Machine: b.machine, Config: config.Default(), Now: b.clock.Now()},
		Job: b.status, Settings: b.settings, Hash: "s2", KindName: "FlinkApplication", Looks: &b.looks, Kind: b.kind,
		Clusters: map[string]*clusters.Objects{"c": {}}}
	p.NewFlink = b.flink
	return p
}

// until runs the handler pass by pass, a second apart, until it leaves its phase.
func (b *bench) until(handle func(*Pass) fsm.Outcome) fsm.Outcome {
	b.t.Helper()
	for range 120 {
		p := b.pass()
		out := handle(p)
		for _, e := range p.Events {
			b.events = append(b.events, e.Reason)
		}
		require.NoError(b.t, out.Err)
		if out.Next != "" {
			return out
		}
		b.clock.Step(time.Second)
	}
	b.t.Fatalf("the phase never ended; events %s", strings.Join(b.events, ","))
	return fsm.Outcome{}
}

// newestCheckpoint is the job's newest completed checkpoint, as Flink lists it now.
func (b *bench) newestCheckpoint() string {
	p := b.flink()
	cps, err := p.Checkpoints(p.Ref("c", b.status.Deployments.Stable.JobID))
	require.NoError(b.t, err)
	require.NotNil(b.t, cps.Latest.Completed)
	return cps.Latest.Completed.ExternalPath
}

func TestACancelUnderLastStateGoesOnFromTheJobsNewestCheckpoint(t *testing.T) {
	b := newBench(t, "RETAIN_ON_CANCELLATION")
	b.clock.Step(35 * time.Second)
	before := b.newestCheckpoint()

	out := b.until(Cancelling)
	assert.Equal(t, fsm.PhaseUpdating, out.Next, "the job stopped; the update deploys the spec: %s", out.Message)
	assert.Equal(t, "JobCancelled", out.Reason)
	assert.Equal(t, client.JobCanceled, b.jm.Jobs()[0].State)
	got := b.status.Deployments.NextRestorePath
	require.Contains(t, got, "/chk-", "the job's own checkpoint")
	assert.GreaterOrEqual(t, chkID(got), chkID(before), "restores %s: never older than %s, the newest before the cancel", got, before)
}

func TestACancelThatWouldDeleteTheCheckpointsTakesASavepointInstead(t *testing.T) {
	b := newBench(t, "DELETE_ON_CANCELLATION")
	b.clock.Step(35 * time.Second)

	out := b.until(Cancelling)
	assert.Equal(t, fsm.PhaseSavepointing, out.Next, out.Message)
	assert.Equal(t, "LastStateViaSavepoint", out.Reason)
	assert.Equal(t, client.JobRunning, b.jm.Jobs()[0].State, "nothing was cancelled")

	out = b.until(Savepointing)
	assert.Equal(t, fsm.PhaseUpdating, out.Next, out.Message)
	path := b.status.Deployments.NextRestorePath
	assert.Contains(t, path, "s3://b/savepoints/", "the next job starts from the savepoint the stop took")
	assert.Equal(t, client.JobCanceled, b.jm.Jobs()[0].State)
}

func TestASuspendTakenBackBeforeTheCancelLeavesTheJobRunning(t *testing.T) {
	b := newBench(t, "RETAIN_ON_CANCELLATION")
	b.clock.Step(15 * time.Second)
	// A suspend asked for the stop (no candidate), then taken back: nothing touched the job yet.
	b.status.Deployments.Candidate, b.settings.Suspend = nil, false

	out := b.until(Cancelling)
	assert.Equal(t, fsm.PhaseRunning, out.Next, out.Message)
	assert.Equal(t, "SuspendCancelled", out.Reason)
	assert.Equal(t, client.JobRunning, b.jm.Jobs()[0].State)
}

// chkID is the checkpoint number of a path Flink names …/chk-N; -1 for any other.
func chkID(path string) int {
	i := strings.LastIndex(path, "/chk-")
	if i < 0 {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSuffix(path[i+len("/chk-"):], "/"))
	if err != nil {
		return -1
	}
	return n
}

func TestARecoveryAfterAFailedSavepointGoesOnFromTheNewestCheckpoint(t *testing.T) {
	b := newBench(t, "RETAIN_ON_CANCELLATION")
	b.clock.Step(35 * time.Second)
	before := b.newestCheckpoint()

	out := b.until(Recovering)
	assert.Equal(t, fsm.PhaseUpdating, out.Next, out.Message)
	assert.Equal(t, "RestoringFromCheckpoint", out.Reason)
	assert.Equal(t, client.JobCanceled, b.jm.Jobs()[0].State)
	assert.GreaterOrEqual(t, chkID(b.status.Deployments.NextRestorePath), chkID(before))
}

func TestARecoveryWhoseCancelWouldDeleteTheCheckpointLeavesTheJobRunning(t *testing.T) {
	b := newBench(t, "DELETE_ON_CANCELLATION")
	b.clock.Step(35 * time.Second)

	out := b.until(Recovering)
	assert.Equal(t, fsm.PhaseDeployFailed, out.Next, out.Message)
	assert.Contains(t, out.Message, "would be deleted by cancelling it")
	assert.Equal(t, client.JobRunning, b.jm.Jobs()[0].State, "the job is left as it was")
	assert.Equal(t, "s2", b.machine.FailedDeployHash, "the update's spec is marked failed, not retried")
}

func TestADeleteWithDeleteModeSavepointEndsTheJobWithAFinalSavepoint(t *testing.T) {
	b := newBench(t, "RETAIN_ON_CANCELLATION")
	b.status.Deployments.Candidate = nil
	b.settings.DeleteMode = v1beta1.DeleteModeSavepoint
	b.clock.Step(15 * time.Second)

	var out fsm.Outcome
	for range 60 {
		p := b.pass()
		out = Deleting(p)
		require.NoError(t, out.Err)
		if out.Reason == "Deleted" {
			break
		}
		b.clock.Step(time.Second)
	}
	assert.Equal(t, "Deleted", out.Reason, out.Message)
	assert.Contains(t, b.status.FinalSavepointPath, "s3://b/savepoints/")
	assert.Contains(t, out.Message, b.status.FinalSavepointPath)
	assert.Equal(t, client.JobCanceled, b.jm.Jobs()[0].State)
}
