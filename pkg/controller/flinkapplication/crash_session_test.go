package flinkapplication

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// playSessionJobs drives two session jobs on one session cluster through upload and run, an update
// of each (Savepoint, LastState), a suspend and resume, and their deletion. Flink must see one job
// per step of each session job, never two of one session job at once, and each job restored from
// the state its step promises.
func playSessionJobs(t *testing.T, w *world) {
	jar := w.withSessions()
	w.createSessionCluster(sessionCluster("session"))
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeSavepoint))
	w.createSessionJob(sessionJob("b", "session", jar, v1beta1.UpgradeModeLastState))
	w.runSessionsUntil("both jobs running", func() bool {
		return w.sessionJobIn("a", v1beta1.SessionJobRunning) && w.sessionJobIn("b", v1beta1.SessionJobRunning)
	})
	w.clock.Step(30 * time.Second)
	w.reconcileSessions()

	updated := func(name, old string) func() bool {
		return func() bool {
			j := w.sessionJob(name)
			return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.JobID != old
		}
	}
	oldA := w.sessionJob("a").Status.JobStatus.JobID
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "c"} })
	w.runSessionsUntil("a updated", updated("a", oldA))
	oldB := w.sessionJob("b").Status.JobStatus.JobID
	w.updateSessionJob("b", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "d"} })
	w.runSessionsUntil("b updated", updated("b", oldB))
	assert.Contains(t, w.sessionJob("b").Status.JobStatus.RestorePath, "/chk-", "b restored from a retained checkpoint")

	oldA = w.sessionJob("a").Status.JobStatus.JobID
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.State = v1beta1.JobStateSuspended })
	w.runSessionsUntil("a suspended", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobSuspended) })
	w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.State = v1beta1.JobStateRunning })
	w.runSessionsUntil("a resumed", updated("a", oldA))
	a := w.sessionJob("a")
	assert.True(t, strings.Contains(a.Status.JobStatus.RestorePath, "savepoint"), "a resumed from its savepoint: %q", a.Status.JobStatus.RestorePath)

	w.deleteSessionJob("a")
	w.deleteSessionJob("b")
	w.runSessionsUntil("both deleted", func() bool { return w.sessionGone("a") && w.sessionGone("b") })

	w.assertOneJobEach("a", "b")
	assert.Len(t, w.jobsOf("session", "a"), 3, "a: the first job, the updated one, the resumed one")
	assert.Len(t, w.jobsOf("session", "b"), 2, "b: the first job and the updated one")
	for _, r := range append(w.jobsOf("session", "a"), w.jobsOf("session", "b")...) {
		if _, alive := r.AliveUntil(); !alive {
			t.Errorf("job %s is still alive after its session job was deleted: %v", r.JobID, r.States)
		}
	}
}
