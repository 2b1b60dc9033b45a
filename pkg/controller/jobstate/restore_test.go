package jobstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The restore policy over recorded state alone (no JobManager to ask): the world tests drive it
// with Flink's answers through every phase that starts a job again.

const otherJob = "fedcba9876543210fedcba9876543210"

func restoreOf(st *v1beta1.JobOwnerStatus, s *Settings, now time.Time) Restore {
	return Restore{Job: Job{Status: st, Settings: s}, Now: now, MaxAge: time.Hour}
}

func TestTheNewestRecordedStateIsChosen(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	st := &v1beta1.JobOwnerStatus{}
	r := restoreOf(st, &Settings{}, now)
	r.Job.Ledger().Record(v1beta1.StateCheckpoint, job, "h1", "file:/cp/"+job+"/chk-4", now.Add(-2*time.Minute))
	r.Job.Ledger().Record(v1beta1.SavepointPeriodic, job, "h1", "file:/sp/savepoint-2", now.Add(-time.Minute))

	assert.Equal(t, "file:/sp/savepoint-2", r.Choose(job, nil, false).Path)
	assert.Empty(t, restoreOf(st, &Settings{UpgradeMode: v1beta1.UpgradeModeStateless}, now).Choose(job, nil, false).Path,
		"upgradeMode Stateless starts without state, as the user said")
}

func TestNothingOlderStandsInForANewestStateThatIsGone(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	st := &v1beta1.JobOwnerStatus{}
	r := restoreOf(st, &Settings{}, now)
	r.Job.Ledger().Record(v1beta1.SavepointPeriodic, job, "h1", "file:/sp/savepoint-1", now.Add(-2*time.Minute))
	r.Job.Ledger().Record(v1beta1.SavepointPeriodic, job, "h1", "file:/sp/savepoint-2", now.Add(-time.Minute))
	gone := metav1.NewTime(now)
	st.Ledger[len(st.Ledger)-1].Gone = &gone

	choice := r.Choose(job, nil, false)
	assert.Empty(t, choice.Path, "never from older state than the newest known")
	assert.Contains(t, choice.Problem, "file:/sp/savepoint-2")

	r.Job.Settings = &Settings{FallbackWithoutState: true}
	assert.True(t, r.Choose(job, nil, false).WithoutState, "fallbackWithoutState says so")
}

func TestABlueGreenJobDoesNotGoBackToACheckpointTheOtherVersionMaySubsume(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	borrowed := "file:/cp/" + otherJob + "/chk-9"
	st := &v1beta1.JobOwnerStatus{}
	st.Deployments.Stable = &v1beta1.DeploymentRecord{JobID: job, ClusterHash: "green", RestorePath: borrowed,
		SubmittedAt: &metav1.Time{Time: now.Add(-time.Minute)}}
	r := restoreOf(st, &Settings{}, now)
	assert.Equal(t, borrowed, r.Choose(job, nil, false).Path, "an owner with no versions side by side restores it")

	r.OtherVersion = func(string) string { return otherJob }
	choice := r.Choose(job, nil, false)
	assert.Empty(t, choice.Path)
	assert.Contains(t, choice.Problem, "may have subsumed it")
	assert.Equal(t, borrowed, r.Choose(job, nil, true).Path, "a state the user named for the job settles it")
}

// Flink's word, read while it knew the job, that it discarded the job's checkpoints as the job
// ended stands once Flink forgets the job: none of them is chosen, and what is left is.
func TestCheckpointsFlinkDiscardedAtTheJobsEndAreNotChosen(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	st := &v1beta1.JobOwnerStatus{}
	st.JobStatus.JobID = job
	r := restoreOf(st, &Settings{}, now)
	l := r.Job.Ledger()
	l.Record(v1beta1.SavepointPeriodic, job, "h1", "file:/sp/savepoint-1", now.Add(-3*time.Minute))
	l.Record(v1beta1.StateCheckpoint, job, "h1", "file:/cp/"+job+"/chk-9", now.Add(-2*time.Minute))
	l.Record(v1beta1.StateCheckpoint, otherJob, "h2", "file:/cp/"+otherJob+"/chk-3", now.Add(-2*time.Minute))
	assert.Equal(t, "file:/cp/"+job+"/chk-9", r.Choose(job, nil, false).Path, "a job not seen ending discarding left its checkpoints")

	l.RecordDiscarded(job, "h1", "file:/cp/"+job+"/chk-10", now.Add(-time.Minute), now)
	assert.Equal(t, "file:/sp/savepoint-1", r.Choose(job, nil, false).Path, "what is left once Flink discarded the checkpoints")
	assert.Equal(t, "file:/cp/"+otherJob+"/chk-3", r.Choose(otherJob, nil, false).Path, "another job's end says nothing of this one")

	l.Record(v1beta1.StateCheckpoint, job, "h1", "file:/cp/"+job+"/chk-1", now)
	assert.Equal(t, "file:/cp/"+job+"/chk-1", r.Choose(job, nil, false).Path,
		"a checkpoint taken after the discard (the job run again under its id) stands")
}

// A discard Flink disputed since is no ground to choose older state, nor the checkpoint in dispute:
// the user names the state, unless a newer state of the job is recorded.
func TestADisputedDiscardChoosesNothingOlder(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	st := &v1beta1.JobOwnerStatus{}
	r := restoreOf(st, &Settings{}, now)
	l := r.Job.Ledger()
	l.Record(v1beta1.SavepointPeriodic, job, "h1", "file:/sp/savepoint-1", now.Add(-3*time.Minute))
	l.RecordDiscarded(job, "h1", "file:/cp/"+job+"/chk-10", now.Add(-2*time.Minute), now)
	assert.Equal(t, "file:/sp/savepoint-1", r.Choose(job, nil, false).Path)

	l.DisputeDiscard(job, now)
	choice := r.Choose(job, nil, false)
	assert.Empty(t, choice.Path)
	assert.True(t, choice.InDoubt)
	assert.Contains(t, choice.Problem, "only its storage can say")
	assert.Equal(t, "file:/sp/savepoint-1", r.Choose(job, nil, true).Path, "a state the user named settles it")

	l.Record(v1beta1.SavepointPeriodic, job, "h1", "file:/sp/savepoint-2", now.Add(-time.Minute))
	assert.Equal(t, "file:/sp/savepoint-2", r.Choose(job, nil, false).Path, "a state newer than the one in dispute")
}
