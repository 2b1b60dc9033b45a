package flinkapplication

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// Flink 2.3 puts every job in an application (the simulator follows its document and Dispatcher:
// integ/flinksim/applications.go). What that changes for the operator, on the simulator as 2.3
// behaves.

// A submission whose answer is lost is sent again under the same id once the grace period ends, and
// Flink refuses it because the job was submitted. Flink 2.3 refuses it as an application already
// submitted, no longer as a job: that refusal means submitted too, not a failed deploy.
func TestASubmissionSentAgainAfterItsAnswerWasLostIsFollowedOnFlink23(t *testing.T) {
	for _, version := range []string{"2.2", "2.3"} {
		t.Run(version, func(t *testing.T) {
			w := newWorld(t)
			w.imageFaults["flink-wordcount:1"] = flinksim.Faults{SubmitRegistersAfter: 2 * time.Minute}
			app := wordcount("wc")
			app.Spec.FlinkVersion = version
			w.create(app)
			app = w.runUntil("wc", "running or failed", func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseRunning || a.Status.Phase == v1beta1.PhaseDeployFailed
			})
			require.Equal(t, v1beta1.PhaseRunning, app.Status.Phase, app.Status.Reason)
			jobs := w.timeline.Jobs(ns + "/wc")
			require.Len(t, jobs, 1)
			assert.Equal(t, app.Status.JobStatus.JobID, jobs[0].JobID)
			assert.False(t, strings.Contains(strings.Join(w.events(), "\n"), "refused"))
		})
	}
}

// haSessionOn23 starts a session cluster of Flink 2.3 with Kubernetes HA, and its two jobs a and b;
// it returns the cluster's JobManager and each session job's job id.
func haSessionOn23(t *testing.T) (*world, *flinksim.JobManager, map[string]string) {
	w := newWorld(t)
	jar := w.withSessions()
	c := sessionCluster("session")
	c.Spec.FlinkVersion = "2.3"
	c.Spec.FlinkConfig["high-availability.type"] = "kubernetes"
	c.Spec.FlinkConfig["high-availability.storageDir"] = "file:///checkpoints/ha"
	w.createSessionCluster(c)
	w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeSavepoint))
	w.createSessionJob(sessionJob("b", "session", jar, v1beta1.UpgradeModeLastState))
	w.runSessionsUntil("both jobs running", func() bool {
		return w.sessionJobIn("a", v1beta1.SessionJobRunning) && w.sessionJobIn("b", v1beta1.SessionJobRunning)
	})
	w.clock.Step(25 * time.Second) // checkpoints
	w.reconcileSessions()
	jm := w.jms["session-"+w.sessionCluster("session").Status.DeployHash]
	require.NotNil(t, jm)
	require.Equal(t, "2.3.0", jm.Release())
	return w, jm, map[string]string{"a": w.sessionJob("a").Status.JobStatus.JobID, "b": w.sessionJob("b").Status.JobStatus.JobID}
}

// liveJobIDs are the jobs a JobManager lists in a state that is not globally terminal.
func liveJobIDs(jm *flinksim.JobManager) []string {
	var out []string
	for _, j := range jm.Jobs() {
		if j.State != "FINISHED" && j.State != "CANCELED" && j.State != "FAILED" {
			out = append(out, j.ID)
		}
	}
	return out
}

// followedAfterFailover runs the session objects for a few minutes after a JobManager failover and
// checks that each session job follows one live job and that the cluster never ran more than its
// two: nothing was submitted beside a job Flink brought back. It returns each session job's job
// and the reasons of the Events meanwhile.
func followedAfterFailover(t *testing.T, w *world, jm *flinksim.JobManager) (map[string]string, []string) {
	w.runSessionsUntil("both jobs running again", func() bool {
		return w.sessionJobIn("a", v1beta1.SessionJobRunning) && w.sessionJobIn("b", v1beta1.SessionJobRunning) &&
			w.sessionJob("a").Status.JobStatus.State == v1beta1.JobRunning && w.sessionJob("b").Status.JobStatus.State == v1beta1.JobRunning &&
			len(liveJobIDs(jm)) == 2
	})
	for end := w.clock.Now().Add(45 * time.Second); w.clock.Now().Before(end); { // past submitGracePeriod
		w.reconcileSessions()
	}
	now := map[string]string{"a": w.sessionJob("a").Status.JobStatus.JobID, "b": w.sessionJob("b").Status.JobStatus.JobID}
	assert.ElementsMatch(t, []string{now["a"], now["b"]}, liveJobIDs(jm), "each session job follows one of the cluster's live jobs")
	assert.LessOrEqual(t, w.timeline.MostAlive(ns+"/session"), 2, "never a job beside the two")
	reasons := eventReasons(w.events())
	assert.NotContains(t, reasons, "InvalidTransition")
	assert.NotContains(t, reasons, "JobLost")
	return now, reasons
}

// After a session JobManager failover with HA, Flink 2.3 recovers each job under its own id, in an
// application of that id: the operator follows each, never submitting one beside it.
func TestASessionJobManagerFailoverOnFlink23KeepsEachJobUnderItsId(t *testing.T) {
	w, jm, before := haSessionOn23(t)
	jm.Restart()
	after, _ := followedAfterFailover(t, w, jm)
	assert.Equal(t, before, after)
}

// If Flink re-ran a job's application under a new job id after a failover (the other way real
// Flink could go: Faults.RerunUnderNewJobID), the job the operator submitted is unknown to the
// JobManager while its application runs the new one. The operator must follow the job Flink re-ran,
// never take the old one for lost and submit another beside it.
func TestAJobFlinkReRanUnderAnotherIdIsFollowedNotSubmittedBeside(t *testing.T) {
	w, jm, before := haSessionOn23(t)
	jm.SetFaults(flinksim.Faults{RerunUnderNewJobID: true})
	jm.Restart()
	after, reasons := followedAfterFailover(t, w, jm)
	for _, name := range []string{"a", "b"} {
		assert.NotEqual(t, before[name], after[name], "%s follows the job Flink re-ran", name)
	}
	assert.Contains(t, reasons, "JobRerun")
}

// While Flink re-runs an application after a failover and has not submitted its job yet, the
// JobManager lists no job of the application: that is no evidence the job is gone, and nothing is
// submitted meanwhile.
func TestNothingIsSubmittedWhileFlinkReRunsAnApplication(t *testing.T) {
	w, jm, before := haSessionOn23(t)
	jm.SetFaults(flinksim.Faults{RerunUnderNewJobID: true, RerunTakes: 90 * time.Second})
	jm.Restart()
	for end := w.clock.Now().Add(time.Minute); w.clock.Now().Before(end); {
		w.reconcileSessions()
	}
	assert.Empty(t, liveJobIDs(jm), "the re-run has not submitted its jobs yet, and neither has the operator")
	after, _ := followedAfterFailover(t, w, jm)
	for _, name := range []string{"a", "b"} {
		assert.NotEqual(t, before[name], after[name], "%s follows the job Flink re-ran", name)
	}
}

// A FlinkApplication's cluster is its own: a job Flink re-ran there under another id is the
// application's job, followed rather than refused as a stranger or submitted beside.
func TestAnApplicationFollowsTheJobFlinkReRanOnItsCluster(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkVersion = "2.3"
		withKubernetesHA(s)
	})
	jm := w.jm(old, old.Status.DeployHash)
	jm.SetFaults(flinksim.Faults{RerunUnderNewJobID: true, RerunTakes: 20 * time.Second})
	jm.Restart()
	app := w.runUntil("wc", "following the re-run job", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != old.Status.JobStatus.JobID &&
			a.Status.JobStatus.State == v1beta1.JobRunning
	})
	assert.Equal(t, old.Status.DeployHash, app.Status.DeployHash, "on the same cluster")
	assert.Equal(t, []string{app.Status.JobStatus.JobID}, liveJobIDs(jm))
	w.passes("wc", 20)
	assert.Equal(t, 1, w.timeline.MostAlive(ns+"/wc"))
	assert.Equal(t, 0, savepointsTaken(w))
	assert.NotContains(t, eventReasons(w.events()), "JobLost")
}

// A failover while the job is being started: the job the operator submitted comes back under
// another id before it ran stable. The start goes on with the job Flink re-ran.
func TestAJobFlinkReRanWhileItWasStartingIsTheOneStarted(t *testing.T) {
	w := newWorld(t)
	app := wordcount("wc")
	app.Spec.FlinkVersion = "2.3"
	withKubernetesHA(&app.Spec)
	w.create(app)
	var jm *flinksim.JobManager
	w.runUntil("wc", "job submitted", func(a *v1beta1.FlinkApplication) bool {
		if c := jobstate.Candidate(&a.Status.JobOwnerStatus); c != nil {
			jm = w.jm(a, c.ClusterHash)
		}
		return jm != nil && len(liveJobIDs(jm)) == 1
	})
	first := liveJobIDs(jm)[0]
	require.NotEqual(t, v1beta1.PhaseRunning, w.get("wc").Status.Phase)
	jm.SetFaults(flinksim.Faults{RerunUnderNewJobID: true})
	jm.Restart()
	running := w.runUntilPhase("wc", v1beta1.PhaseRunning)
	assert.NotEqual(t, first, running.Status.JobStatus.JobID)
	assert.Equal(t, []string{running.Status.JobStatus.JobID}, liveJobIDs(jm))
	assert.Equal(t, 1, w.timeline.MostAlive(ns+"/wc"))
	assert.Contains(t, eventReasons(w.events()), "JobRerun")
}

// An update from Flink 2.2 to 2.3 stops the old job with a savepoint on 2.2 and starts the new one
// on 2.3 from it, as any upgrade.
func TestAnUpdateFromFlink22To23CarriesTheJobsState(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) { s.FlinkVersion = "2.2" })
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.FlinkVersion = "2.3"
		a.Spec.Image = "flink-wordcount:2"
	})
	app := w.runUntil("wc", "upgraded", upgradedFrom(old))
	jm := w.jm(app, app.Status.DeployHash)
	assert.Equal(t, "2.3.0", jm.Release())
	assert.Equal(t, 1, savepointsTaken(w))
	require.Len(t, jm.Jobs(), 1)
	assert.Contains(t, jm.Jobs()[0].RestoredFrom, "savepoint-")
	w.assertOneJobAtATime(w.events())
}
