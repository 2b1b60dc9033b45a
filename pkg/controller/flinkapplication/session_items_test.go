package flinkapplication

import (
	"fmt"
	"math"
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

// issue 24 item 7: a FlinkSessionCluster whose new spec cannot deploy rests in DeployFailed, the
// running Flink cluster kept, until the spec changes: not Updating → DeployFailed again at every
// pass, with a status write and two Events each time.
func TestASessionClusterWhoseNewSpecFailsRestsInDeployFailed(t *testing.T) {
	w := newWorld(t)
	w.withSessions()
	w.createSessionCluster(sessionCluster("session"))
	w.runSessionsUntil("cluster running", func() bool {
		return w.sessionCluster("session").Status.Phase == v1beta1.SessionClusterRunning
	})
	runningHash := w.sessionCluster("session").Status.DeployHash
	// The status writes of a cluster resting in Running, for comparison.
	steady := w.countSessionClusterStatusWrites()
	for i := 0; i < 30; i++ {
		w.reconcileSessions()
	}
	baseline := *steady

	// More task slots than Flink counts: the spec is refused before anything is created.
	huge := int32(math.MaxInt32)
	w.updateSessionCluster("session", func(c *v1beta1.FlinkSessionCluster) { c.Spec.TaskManagerConfig.Replicas = &huge })
	w.runSessionsUntil("DeployFailed", func() bool {
		return w.sessionCluster("session").Status.Phase == v1beta1.SessionClusterDeployFailed
	})
	w.events()
	writes := w.countSessionClusterStatusWrites()

	const passes = 30
	var phases []v1beta1.FlinkSessionClusterPhase
	for i := 0; i < passes; i++ {
		w.reconcileSessions()
		phases = append(phases, w.sessionCluster("session").Status.Phase)
	}
	events := w.events()
	c := w.sessionCluster("session")
	left := 0
	for _, p := range phases {
		if p != v1beta1.SessionClusterDeployFailed {
			left++
		}
	}
	assert.Zero(t, left, "the cluster rests in DeployFailed until the spec changes; phases seen over %d passes: %v", passes, phases)
	assert.LessOrEqual(t, len(events), 2, "resting in DeployFailed emits no Events pass after pass; %d Events over %d passes, e.g. %v",
		len(events), passes, events[:min(len(events), 4)])
	assert.LessOrEqual(t, *writes, baseline+2, "resting in DeployFailed writes status no more often than resting in Running (%d writes in %d passes); it wrote %d",
		baseline, passes, *writes)
	assert.Equal(t, runningHash, c.Status.DeployHash, "the running Flink cluster is kept")
}

// issue 24 item 9: a session job whose Flink job FAILED must not stay in phase Running with a reason
// that says the job runs: it leaves Running (a failure phase, or a restart with a new job).
func TestASessionJobWhoseFlinkJobFailedDoesNotStayRunning(t *testing.T) {
	w, _ := runningJobs(t)
	a := w.sessionJob("a")
	failedJob := a.Status.JobStatus.JobID
	jm := w.jms["session-"+w.sessionCluster("session").Status.DeployHash]
	require.NotNil(t, jm)
	require.True(t, jm.FailJobNow(failedJob))
	for i := 0; i < 60; i++ {
		w.reconcileSessions()
	}
	for _, j := range jm.Jobs() {
		if j.ID == failedJob {
			require.Equal(t, "FAILED", j.State, "harness: Flink reports the job FAILED")
		}
	}
	got := w.sessionJob("a")
	stillClaimsIt := got.Status.Phase == v1beta1.SessionJobRunning && got.Status.JobStatus.JobID == failedJob
	assert.False(t, stillClaimsIt, "a session job whose job %s FAILED leaves Running (or restarts with a new job); "+
		"it stays %s with reason %q and jobStatus.state %s", failedJob, got.Status.Phase, got.Status.Reason, got.Status.JobStatus.State)
}
