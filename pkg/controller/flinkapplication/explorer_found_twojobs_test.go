package flinkapplication

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessionjob"
)

// Two live jobs of one object that the randomized explorer (explorer_test.go) found, each reduced
// to a world test of its own; the comment names the seeds that found it.

// An update whose new job's JobManager stops answering for it (GET /jobs/:id fails) cannot be
// stable, and its rollback cannot confirm the job's cancel: the rollback gives up into DeployFailed
// with the job still running on the failed attempt's cluster (explorer seeds 1106, 1151 and 1254).
// The next update's job is submitted only once that cluster's JobManager is gone.
func TestAnUpdateGivenUpOnWhileItsJobCannotBeReadNeverRunsBesideTheNextOne(t *testing.T) {
	w := newWorld(t)
	app := running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	attempt := ""
	w.runUntil("wc", "the update's job submitted", func(a *v1beta1.FlinkApplication) bool {
		c := a.Status.Deployments.Candidate
		if c == nil || c.JobID == "" {
			return false
		}
		for _, j := range w.timeline.Jobs(ns + "/wc") {
			if j.JobID == c.JobID {
				attempt = c.ClusterHash
				return true
			}
		}
		return false
	})
	w.jm(app, attempt).SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointJob: 1}})
	w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:3" })
	w.runUntil("wc", "the next update's job running, or given up", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.State == v1beta1.JobRunning ||
			a.Status.Phase == v1beta1.PhaseDeployFailed && a.Status.FailedDeployHash == a.Status.UpdatingHash
	})
	w.passes("wc", 10)
	w.assertOneJobAtATime(w.events())
}

// A session job whose job is given up on while it may still run keeps it as its job (explorer
// seeds 1140 and 1316): a job whose JobManager stopped answering for it ends Submitting in
// DeployFailed, a first deploy's as an update's, and when the spec and the session cluster then
// change, the job is stopped before another is submitted to the session cluster's new Flink cluster.
func TestASessionJobGivenUpOnWhileItMayRunIsStoppedBeforeTheNextOne(t *testing.T) {
	for _, update := range []bool{false, true} {
		t.Run(map[bool]string{false: "first deploy", true: "update"}[update], func(t *testing.T) {
			w := newWorld(t)
			jar := w.withSessions()
			w.createSessionCluster(sessionCluster("session"))
			w.createSessionJob(sessionJob("a", "session", jar, v1beta1.UpgradeModeSavepoint))
			submitted := 1
			if update {
				w.runSessionsUntil("the job running", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobRunning) })
				w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "b c"} })
				submitted = 2
			}
			w.runSessionsUntil("the job submitted", func() bool { return len(w.jobsOf("session", "a")) == submitted })
			jm := w.jms["session-"+w.sessionCluster("session").Status.DeployHash]
			jm.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointJob: 1}})
			w.runSessionsUntil("the job given up on", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobDeployFailed) })
			w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) { c.Spec.Image = "flink:1.20.1" })
			w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "c d"} })
			for end := w.clock.Now().Add(10 * time.Minute); w.clock.Now().Before(end); {
				w.reconcileSessions()
			}
			// The stop gave up, and the session job rests with its job as it was until the spec changes.
			jm.SetFaults(flinksim.Faults{})
			w.updateSessionJob("a", func(j *v1beta1.FlinkSessionJob) { j.Spec.Job.Args = []string{"--input", "d e"} })
			w.runSessionsUntil("the job running on the new Flink cluster", func() bool {
				j, c := w.sessionJob("a"), w.sessionCluster("session")
				return j.Status.Phase == v1beta1.SessionJobRunning && j.Status.JobStatus.ClusterHash == c.Status.DeployHash &&
					j.Status.Deployments.Stable.SpecHash == sessionjob.Hash(j)
			})
			w.assertOneJobEach("a")
		})
	}
}

// A rescale in place (scaleMode InPlace, without the adaptive scheduler) starts its job on the
// stable deployment's own cluster. Given up on while its JobManager fails to answer for the job, it
// leaves the job there, on the cluster a rollback returns to, which is never deleted as a leftover:
// the job stays the application's, and the next update stops it before it starts another.
func TestARescaleInPlaceGivenUpOnWhileItsJobCannotBeReadNeverRunsBesideTheNextUpdate(t *testing.T) {
	w := newWorld(t)
	app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) { s.ScaleMode = v1beta1.ScaleModeInPlace })
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 2 })
	w.runUntil("wc", "the rescaled job submitted", func(a *v1beta1.FlinkApplication) bool {
		c := a.Status.Deployments.Candidate
		return c != nil && c.JobID != "" && len(w.timeline.Jobs(ns+"/wc")) == 2
	})
	jm := w.jm(app, app.Status.DeployHash)
	jm.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointJob: 1}})
	w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	for end := w.clock.Now().Add(10 * time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	jm.SetFaults(flinksim.Faults{})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:3" })
	w.runUntil("wc", "the update's job running", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.State == v1beta1.JobRunning && a.Status.DeployHash != app.Status.DeployHash
	})
	w.passes("wc", 10)
	w.assertOneJobAtATime(w.events())
}

// A first deploy given up on while its job cannot be read leaves that job running on its cluster,
// its id dropped (explorer seed 10000241, a BlueGreen first deploy whose tasks failed every ten
// seconds). Deleting the application with deleteMode Savepoint deletes that cluster and keeps the
// finalizer until its JobManager is gone: no job of the application runs on once it is gone, beside
// one that an application created again under its name would start.
func TestADeleteWaitsForTheJobManagerOfAClusterLeftByADeployGivenUpOn(t *testing.T) {
	w := newWorld(t)
	app := wordcount("wc")
	app.Spec.DeleteMode = v1beta1.DeleteModeSavepoint
	w.create(app)
	var attempt *flinksim.JobManager
	w.runUntil("wc", "the first job submitted", func(a *v1beta1.FlinkApplication) bool {
		for _, j := range w.timeline.Jobs(ns + "/wc") {
			w.mu.Lock()
			attempt = w.jms[j.JobManager]
			w.mu.Unlock()
		}
		return attempt != nil
	})
	attempt.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.EndpointJob: 1}})
	w.runUntilPhase("wc", v1beta1.PhaseDeployFailed)
	w.deleteApp("wc")
	w.runUntil("wc", "finalizer removed", finalized)
	jobs := w.timeline.Jobs(ns + "/wc")
	if len(jobs) == 0 {
		t.Fatal("no job was submitted")
	}
	for _, j := range jobs {
		if _, ended := j.AliveUntil(); !ended {
			t.Errorf("job %s runs on as the application goes", j.JobID)
		}
	}
}

// A JobManager pod of a leftover cluster that does not go (its node is down) holds the deleted
// application for good: a job there could run on beside the job of an application created again
// under the name. The wait is not given up, but after kindpass.HACleanupWait the user is told, by a Warning
// naming the cluster and how to remove its pods, and the application goes once they are gone.
func TestADeleteHeldByALeftoverJobManagerThatDoesNotGoSaysHowToRemoveIt(t *testing.T) {
	w := newWorld(t)
	app := wordcount("wc")
	app.Spec.DeleteMode = v1beta1.DeleteModeSavepoint
	w.create(app)
	app = w.runUntilPhase("wc", v1beta1.PhaseRunning)
	left := "0badcafe"
	// A cluster of the application's own, which its status names (the failed stop of a job there).
	app.Status.Ledger = append(app.Status.Ledger, v1beta1.StateEntry{Purpose: v1beta1.SavepointUpgrade, JobID: "0badcafe0badcafe0badcafe0badcafe",
		ClusterHash: left, Result: v1beta1.StateFailed})
	_, err := w.apps.FlinkV1beta1().FlinkApplications(ns).UpdateStatus(context.Background(), app, metav1.UpdateOptions{})
	require.NoError(t, err)
	pod := jobManagerPod("wc-"+left+"-jm-0", "wc")
	pod.Labels[k8.HashLabel] = left
	_, err = w.kube.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{})
	require.NoError(t, err)

	w.deleteApp("wc")
	for end := w.clock.Now().Add(kindpass.HACleanupWait + time.Minute); w.clock.Now().Before(end); {
		_, _ = w.reconcile("wc")
	}
	require.True(t, hasFinalizer(w.get("wc")), "the application stays while the leftover JobManager runs")
	warned := false
	for _, e := range w.events() {
		warned = warned || strings.Contains(e, "LeftoverJobManagerRunning") && strings.Contains(e, "wc-"+left) &&
			strings.Contains(e, "kubectl delete pod --force")
	}
	assert.True(t, warned, "a Warning says which JobManager holds the deletion and how to remove it: %v", w.events())

	require.NoError(t, w.kube.CoreV1().Pods(ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{}))
	w.runUntil("wc", "finalizer removed", finalized)
}
