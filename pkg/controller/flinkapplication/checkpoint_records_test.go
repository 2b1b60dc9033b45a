package flinkapplication

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// The restore guarantee behind recording a checkpoint once a minute: a job that checkpoints every
// 10 s, with no retention set, lost with its JobManager (no HA) at any moment, restarts from a
// checkpoint that still exists and is at most checkpointRecordInterval + statusPollInterval + one
// checkpoint interval (80 s with the defaults) older than the newest one Flink completed.
func TestAJobLostWithoutHAStartsFromACheckpointAtMostTheBoundOld(t *testing.T) {
	for _, offset := range []time.Duration{0, 7 * time.Second, 23 * time.Second, 41 * time.Second, 58 * time.Second, 66 * time.Second} {
		t.Run(fmt.Sprintf("lost %s into a minute", offset), func(t *testing.T) {
			w := newWorld(t)
			app := running(t, w, "wc")
			cfg := w.env.Config
			bound := cfg.CheckpointRecordInterval.Duration + cfg.StatusPollInterval.Duration + 10*time.Second
			require.Equal(t, "9", w.clusterFlinkConfig(app, app.Status.DeployHash)[flink.RetainedCheckpointsKey],
				"the operator's cluster keeps enough checkpoints for a record a minute")
			end := w.clock.Now().Add(3*time.Minute + offset)
			for w.clock.Now().Before(end) {
				w.settle()
				_, _ = w.env.Reconcile(context.Background(), ns, "wc")
				w.clock.Step(min(cfg.StatusPollInterval.Duration, end.Sub(w.clock.Now())+time.Millisecond))
			}
			jobID := w.get("wc").Status.JobStatus.JobID
			newest := newestCheckpoint(w.storage, jobID)
			require.NotNil(t, newest)
			w.jm(app, app.Status.DeployHash).Restart()

			again := w.runUntil("wc", "running again", func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.JobID != jobID && a.Status.JobStatus.State == v1beta1.JobRunning
			})
			restored, ok := w.storage.Get(again.Status.JobStatus.RestorePath)
			require.True(t, ok, "restored from %q, which exists", again.Status.JobStatus.RestorePath)
			assert.Equal(t, jobID, restored.JobID)
			gap := newest.CreatedAt.Sub(restored.CreatedAt)
			assert.LessOrEqual(t, gap, bound, "restored %s, newest %s", restored.Path, newest.Path)
			t.Logf("restored a checkpoint %s older than the newest (bound %s)", gap, bound)
		})
	}
}

// newestCheckpoint is the newest checkpoint of a job on storage.
func newestCheckpoint(s *flinksim.Storage, jobID string) *flinksim.Snapshot {
	var out *flinksim.Snapshot
	for _, snap := range s.Snapshots() {
		if snap.JobID == jobID && !snap.Savepoint && (out == nil || snap.CreatedAt.After(out.CreatedAt)) {
			snap := snap
			out = &snap
		}
	}
	return out
}

// clusterFlinkConfig is the Flink configuration the JobManager of the cluster with this hash was
// started with (FLINK_PROPERTIES).
func (w *world) clusterFlinkConfig(app *v1beta1.FlinkApplication, hash string) map[string]string {
	w.t.Helper()
	d, err := w.kube.AppsV1().Deployments(ns).Get(context.Background(), flink.JobManagerName(app, hash), metav1.GetOptions{})
	require.NoError(w.t, err)
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "FLINK_PROPERTIES" {
			return flinksim.ParseFlinkProperties(e.Value)
		}
	}
	return nil
}

// Jobs started together complete their first checkpoints together. Their records once a minute
// used to come due in the same poll, every minute: a burst of status writes that queued in the API
// server and held up the passes behind it (reconcile p99 358 ms at 1,000 applications). Each job's
// records keep a phase of its own over the record window after the first.
func TestCheckpointRecordsOfJobsStartedTogetherSpreadOverTheMinute(t *testing.T) {
	w := newWorld(t)
	const apps = 12
	names := make([]string, apps)
	for i := range names {
		names[i] = fmt.Sprintf("cp-%02d", i)
		w.create(wordcount(names[i]))
	}
	for _, name := range names {
		w.runUntilPhase(name, v1beta1.PhaseRunning)
	}
	cfg := w.env.Config
	poll := cfg.StatusPollInterval.Duration
	recorded := map[string]string{}
	// Every application is polled at the same instants, as jobs started together are: whatever
	// spreads their records is the operator's, not the polls'.
	recordsAtPoll := map[int]int{}
	for step := 0; step < int(4*time.Minute/poll); step++ {
		w.settle()
		for _, name := range names {
			_, _ = w.env.Reconcile(context.Background(), ns, name)
			path := w.get(name).Status.JobStatus.LastCheckpointPath
			if path != recorded[name] {
				if recorded[name] != "" && step >= int(cfg.CheckpointRecordInterval.Duration/poll) {
					recordsAtPoll[step%int(cfg.CheckpointRecordInterval.Duration/poll)]++
				}
				recorded[name] = path
			}
		}
		w.clock.Step(poll)
	}
	most, total := 0, 0
	for _, n := range recordsAtPoll {
		most, total = max(most, n), total+n
	}
	require.Positive(t, total)
	t.Logf("records by poll of the minute: %v", recordsAtPoll)
	assert.LessOrEqual(t, most, total/2, "records by poll of the minute: %v", recordsAtPoll)
}

// checkpointing is the wordcount application checkpointing every interval; "" for none.
func checkpointing(name, interval string) *v1beta1.FlinkApplication {
	app := wordcount(name)
	delete(app.Spec.FlinkConfig, flink.CheckpointIntervalKey)
	if interval != "" {
		app.Spec.FlinkConfig[flink.CheckpointIntervalKey] = interval
	}
	return app
}
