package jobstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
)

const job = "0123456789abcdef0123456789abcdef"

// A job that restored a savepoint the operator never dated is dated by its submission, and never
// later than the first state it completed itself: what a job started from is older than all it did.
func TestAJobsStartStateIsOlderThanEveryStateItCompleted(t *testing.T) {
	submitted := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	st := &v1beta1.JobOwnerStatus{}
	st.Deployments.Stable = &v1beta1.DeploymentRecord{JobID: job, ClusterHash: "h1", RestorePath: "file:/sp/savepoint-1",
		SubmittedAt: &metav1.Time{Time: submitted}}
	j := Job{Status: st}
	first := submitted.Add(-time.Minute) // the JobManager's clock runs behind
	j.Ledger().Record(v1beta1.StateCheckpoint, job, "h1", "file:/cp/"+job+"/chk-1", first)

	s := j.StartedFrom(job)
	if assert.NotNil(t, s) {
		assert.Equal(t, "file:/sp/savepoint-1", s.Path)
		assert.True(t, s.At.Before(first), "dated %s, not before the job's own checkpoint at %s", s.At, first)
	}
	assert.True(t, j.IsStartOf(job, "file:/sp/savepoint-1"))
	assert.Nil(t, j.StartedFrom("another job"), "only a record of that very job says what it started from")
}

// The checkpoint book's entry counts for the job it was noted for, and is read when asked.
func TestTheBookCountsOnlyForItsOwnJob(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	entry := checkpointbook.Entry{JobID: job, Path: "file:/cp/" + job + "/chk-7", At: at}
	noted := false
	j := Job{Status: &v1beta1.JobOwnerStatus{}, Noted: func() (checkpointbook.Entry, bool) { return entry, noted }}
	assert.Empty(t, j.NewestStatePath(job))
	noted = true
	assert.Equal(t, entry.Path, j.NewestStatePath(job), "a note made during the pass is seen")
	assert.Equal(t, at, j.RecordedTimeOf(job, entry.Path))
	assert.Empty(t, j.BookPoints("another job"))
	assert.Empty(t, Job{Status: &v1beta1.JobOwnerStatus{}}.BookPoints(job), "no book, no entry")
}

// What a process that takes over would restore from is the newest state status and the book's page
// hold: an entry noted and not written yet is not among them.
func TestTheNewestWrittenStateLeavesOutABookEntryNotWrittenYet(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	savepoint := "file:/sp/savepoint-1"
	st := &v1beta1.JobOwnerStatus{}
	st.Ledger = []v1beta1.StateEntry{{Purpose: v1beta1.SavepointManual, JobID: job, Result: v1beta1.StateCompleted,
		Path: savepoint, Time: &metav1.Time{Time: at}}}
	noted := checkpointbook.Entry{JobID: job, Path: "file:/cp/" + job + "/chk-7", At: at.Add(time.Minute)}
	written := false
	j := Job{Status: st, Noted: func() (checkpointbook.Entry, bool) { return noted, true },
		Written: func() (checkpointbook.Entry, bool) { return noted, written }}
	assert.Equal(t, noted.Path, j.NewestStatePath(job))
	assert.Equal(t, savepoint, j.NewestWrittenStatePath(job), "the book's entry is not written yet")
	written = true
	assert.Equal(t, noted.Path, j.NewestWrittenStatePath(job))
}

func TestStatePathsAreComparedAsFlinkWritesThemBack(t *testing.T) {
	assert.True(t, SamePath("file:///sp/savepoint-1/_metadata", "file:/sp/savepoint-1/"))
	assert.False(t, SamePath("", ""))
	assert.True(t, IsCheckpointOf(job, "s3://b/cp/"+job+"/chk-3"))
	assert.False(t, IsCheckpointOf(job, "s3://b/sp/savepoint-"+job[:6]+"-1"))
}
