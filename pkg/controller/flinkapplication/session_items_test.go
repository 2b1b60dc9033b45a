package flinkapplication

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Scenarios of issue 24 (session-kind items), driven through the world's session helpers.

// countSessionClusterStatusWrites counts the status writes of FlinkSessionClusters from now on.
func (w *world) countSessionClusterStatusWrites() *int {
	n := 0
	w.apps.PrependReactor("patch", "flinksessionclusters", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			n++
		}
		return false, nil, nil
	})
	return &n
}

// issue 24 item 8: a FlinkSessionJob deleted with deleteMode None leaves its job running; a new
// FlinkSessionJob created under the same name (a new UID) with another program must never adopt
// that job. An Event names the old job.
func TestASessionJobCreatedAgainUnderTheSameNameNeverAdoptsTheOldJob(t *testing.T) {
	w := newWorld(t)
	jar := w.withSessions()
	w.createSessionCluster(sessionCluster("session"))
	first := sessionJob("a", "session", jar, v1beta1.UpgradeModeSavepoint)
	first.UID = types.UID("11111111-1111-1111-1111-111111111111")
	first.Spec.DeleteMode = v1beta1.DeleteModeNone
	w.createSessionJob(first)
	w.runSessionsUntil("a running", func() bool { return w.sessionJobIn("a", v1beta1.SessionJobRunning) })
	oldJob := w.sessionJob("a").Status.JobStatus.JobID
	require.NotEmpty(t, oldJob)

	w.deleteSessionJob("a")
	w.runSessionsUntil("a gone", func() bool { return w.sessionGone("a") })
	jm := w.jms["session-"+w.sessionCluster("session").Status.DeployHash]
	require.NotNil(t, jm)
	stillRunning := false
	for _, j := range jm.Jobs() {
		if j.ID == oldJob && j.State == "RUNNING" {
			stillRunning = true
		}
	}
	require.True(t, stillRunning, "deleteMode None left job %s running", oldJob)
	w.events()

	second := sessionJob("a", "session", jar, v1beta1.UpgradeModeSavepoint)
	second.UID = types.UID("22222222-2222-2222-2222-222222222222")
	second.Spec.Job.EntryClass = "org.apache.flink.OtherProgram"
	second.Spec.Job.Args = []string{"--other", "program"}
	w.createSessionJob(second)
	// The first pass at which the new object's status took the old job as its own, if any.
	adopted := ""
	for end := w.clock.Now().Add(3 * time.Minute); w.clock.Now().Before(end) && adopted == ""; {
		w.reconcileSessions()
		j := w.sessionJob("a")
		for _, r := range []*v1beta1.DeploymentRecord{j.Status.Deployments.Stable, j.Status.Deployments.Candidate} {
			if r != nil && r.JobID == oldJob || j.Status.JobStatus.JobID == oldJob {
				adopted = fmt.Sprintf("in phase %s at %s", j.Status.Phase, w.clock.Now().Format(time.TimeOnly))
			}
		}
	}
	events := w.events()
	assert.Empty(t, adopted, "the new FlinkSessionJob (another UID, another program) must never take job %s of the deleted one as its own; "+
		"it did %s; now: %s; events: %v", oldJob, adopted, w.describeSessions(), events)
	var naming []string
	for _, e := range events {
		if strings.Contains(e, oldJob) {
			naming = append(naming, e)
		}
	}
	assert.NotEmpty(t, naming, "an Event names the old job %s that the new FlinkSessionJob found on the cluster", oldJob)
}
