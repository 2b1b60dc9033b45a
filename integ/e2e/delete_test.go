package e2e

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Deleting an application handles its job per deleteMode, then lets the application go and its
// cluster be garbage-collected.
func TestDeleteHandlesJobPerDeleteMode(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	tests := []struct {
		mode       v1beta1.DeleteMode
		savepoints int
		// check looks at the job's life in Flink once the application and its cluster are gone.
		check func(s *scenario, deletedAt time.Time, job flinksim.JobRecord)
	}{
		{v1beta1.DeleteModeSavepoint, 1, func(s *scenario, _ time.Time, job flinksim.JobRecord) {
			if !reached(job, "CANCELED") {
				s.t.Errorf("job %s went %s, want it CANCELED after its final savepoint", job.JobID, states(job))
			}
			savepoints := savepointsOf(job.JobID)
			if len(savepoints) != 1 {
				s.t.Fatalf("job %s has %d savepoints in storage, want the final one", job.JobID, len(savepoints))
			}
			// Events are recorded asynchronously, possibly after the application is gone.
			s.waitFinalSavepointEvent(s.apps[0], savepoints[0].Path)
		}},
		{v1beta1.DeleteModeForceCancel, 0, func(s *scenario, _ time.Time, job flinksim.JobRecord) {
			if !reached(job, "CANCELED") {
				s.t.Errorf("job %s went %s, want it CANCELED", job.JobID, states(job))
			}
			if n := len(savepointsOf(job.JobID)); n != 0 {
				s.t.Errorf("ForceCancel left %d savepoints of job %s", n, job.JobID)
			}
		}},
		{v1beta1.DeleteModeNone, 0, func(s *scenario, deletedAt time.Time, job flinksim.JobRecord) {
			// Flink is left alone: the job runs until garbage collection takes its cluster (losing
			// its TaskManagers first may fail it over, as in real Flink, but nobody cancels it).
			end, ended := job.AliveUntil()
			if reached(job, "CANCELLING") || !ended || end.Before(deletedAt) {
				s.t.Errorf("job %s went %s, ending %v; want it left running after the deletion at %v",
					job.JobID, states(job), end, deletedAt)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			defer stopEnvOnPanic()
			t.Parallel()
			s := newScenario(t)
			if err := theSuite.GarbageCollectorReady(); err != nil {
				t.Fatal(err)
			}
			app := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) { spec.DeleteMode = tt.mode })
			jm := s.jobManager(app)
			jobID := app.Status.JobStatus.JobID

			deletedAt := time.Now()
			if err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Delete(s.ctx, app.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("deleting: %v", err)
			}
			s.waitGone(app.Name)
			s.waitNamespaceEmpty()
			s.assertSavepointTriggers(jm, tt.savepoints)
			tt.check(s, deletedAt, s.record(app.Name, jobID))
		})
	}
}

// savepointsOf lists the savepoints of a job in the simulator's storage.
func savepointsOf(jobID string) []flinksim.Snapshot {
	var out []flinksim.Snapshot
	for _, snap := range env.Fleet.Storage().Snapshots() {
		if snap.JobID == jobID && snap.Savepoint {
			out = append(out, snap)
		}
	}
	return out
}

// waitNamespaceEmpty waits until garbage collection has removed every Deployment, Service and pod
// of the test's namespace, and the simulator has seen the JobManagers go.
func (s *scenario) waitNamespaceEmpty() {
	s.t.Helper()
	s.eventually("owned objects garbage-collected", func() (bool, string) {
		opts := metav1.ListOptions{}
		deploys, err := env.Kube.AppsV1().Deployments(s.ns).List(s.ctx, opts)
		if err != nil {
			return false, err.Error()
		}
		services, err := env.Kube.CoreV1().Services(s.ns).List(s.ctx, opts)
		if err != nil {
			return false, err.Error()
		}
		pods, err := env.Kube.CoreV1().Pods(s.ns).List(s.ctx, opts)
		if err != nil {
			return false, err.Error()
		}
		if n := len(deploys.Items) + len(services.Items) + len(pods.Items); n > 0 {
			return false, fmt.Sprintf("%d Deployments, %d Services, %d pods left", len(deploys.Items), len(services.Items), len(pods.Items))
		}
		for _, name := range s.apps {
			for _, j := range s.timeline(name) {
				if _, ended := j.AliveUntil(); !ended {
					return false, fmt.Sprintf("the simulator still runs job %s", j.JobID)
				}
			}
		}
		return true, ""
	})
}
