package flinkapplication

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// Under Flink HA, an application's JobManager gone is no evidence that its job stopped: Flink
// suspends the job and keeps it in the HA data, and the next JobManager of that cluster id runs it
// again. A suspend whose savepoint is in flight when the JobManager Deployment goes creates the
// JobManager again and stops the job HA brings back, with a savepoint of it. Explorer seed
// 57002531: the suspend took the job for stopped and recorded older state; the resume created the
// same cluster, HA ran the job again, and a spec change a second later submitted a second job
// beside it.
func TestAnHAApplicationsSuspendStopsTheJobHABringsBackWhenItsJobManagerGoes(t *testing.T) {
	for _, inFlight := range []bool{false, true} {
		t.Run(fmt.Sprintf("savepoint in flight %v", inFlight), func(t *testing.T) {
			w := newWorld(t)
			old := runningWith(t, w, "wc", withKubernetesHA)
			job := old.Status.JobStatus.JobID
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateSuspended })
			if inFlight {
				w.jm(old, old.Status.DeployHash).SetFaults(flinksim.Faults{HangSavepoints: true})
				w.runUntil("wc", "suspend savepoint in flight", func(a *v1beta1.FlinkApplication) bool {
					return a.Status.Phase == v1beta1.PhaseSavepointing && a.Status.SavepointTriggerID != ""
				})
			} else {
				w.runUntilPhase("wc", v1beta1.PhaseSavepointing)
			}
			require.NoError(t, w.kube.AppsV1().Deployments(ns).Delete(context.Background(),
				flink.JobManagerName(old, old.Status.DeployHash), metav1.DeleteOptions{}))

			w.events()
			suspended := w.runUntilPhase("wc", v1beta1.PhaseSuspended)
			assert.NotContains(t, strings.Join(w.events(), "\n"), "all its pods are gone",
				"job %s was taken for stopped while Flink HA kept it", job)
			for _, r := range w.timeline.Jobs(ns + "/wc") {
				_, ended := r.AliveUntil()
				assert.True(t, ended, "job %s runs on, or runs again with HA, after the suspend: %v", r.JobID, r.States)
			}
			path := suspended.Status.Deployments.NextRestorePath
			require.NotEmpty(t, path)

			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.State = v1beta1.JobStateRunning })
			w.reconcile("wc")
			w.reconcile("wc")
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
			resumed := w.runUntil("wc", "resumed", func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.State == v1beta1.JobRunning
			})
			assert.Equal(t, path, resumed.Status.JobStatus.RestorePath)
			w.assertOneJobAtATime(w.events())
		})
	}
}
