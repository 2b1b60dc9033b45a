package flinkapplication

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// The restore guarantee behind recording a checkpoint once a minute: a job that checkpoints every
// 10 s, with no retention set, lost with its JobManager (no HA) at any moment, restarts from a
// checkpoint that still exists and is at most checkpointRecordInterval + statusPollInterval + one
// checkpoint interval (80 s with the defaults) older than the newest one Flink completed.
func TestAJobLostWithoutHAStartsFromACheckpointAtMostTheBoundOld(t *testing.T) {
	for _, offset := range []time.Duration{0, 7 * time.Second, 23 * time.Second, 41 * time.Second, 58 * time.Second, 66 * time.Second} {
		for _, crash := range []bool{false, true} {
			name := fmt.Sprintf("lost %s into a minute", offset)
			if crash {
				name += ", the operator restarted with it"
			}
			t.Run(name, func(t *testing.T) {
				w := newWorld(t)
				app := running(t, w, "wc")
				cfg := w.env.Config
				// A record waits up to a flush for the checkpoint book's write: an operator that
				// restarts loses what it noted since, and restores from the one before.
				bound := cfg.CheckpointRecordInterval.Duration + cfg.StatusPollInterval.Duration + cfg.CheckpointBookInterval.Duration + 10*time.Second
				require.Equal(t, "10", w.clusterFlinkConfig(app, app.Status.DeployHash)[flink.RetainedCheckpointsKey],
					"the operator's cluster keeps enough checkpoints for a record a minute and the book's write")
				end := w.clock.Now().Add(3*time.Minute + offset)
				for w.clock.Now().Before(end) {
					w.settle()
					_, _ = w.env.Reconcile(context.Background(), ns, "wc")
					w.clock.Step(min(cfg.StatusPollInterval.Duration, end.Sub(w.clock.Now())+time.Millisecond))
				}
				jobID := w.get("wc").Status.JobStatus.JobID
				newest := newestCheckpoint(w.storage, jobID)
				require.NotNil(t, newest)
				if crash {
					w.restartOperator()
				}
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
			path := w.recordedCheckpoint(name)
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

// recordedCheckpoint is the newest checkpoint the operator recorded of the application's job: in
// status, or in the checkpoint book (noted, or written to its page) when newer.
func (w *world) recordedCheckpoint(name string) string {
	path, _ := w.recordedCheckpointAt(name)
	return path
}

// recordedCheckpointAt is recordedCheckpoint with the time Flink triggered it.
func (w *world) recordedCheckpointAt(name string) (string, time.Time) {
	w.t.Helper()
	js := w.get(name).Status.JobStatus
	k := checkpointbook.Key{Namespace: ns, Kind: applicationKindName, Name: name}
	page, err := w.env.Observer.CheckpointBookPage(ns, checkpointbook.PageName(k))
	require.NoError(w.t, err)
	if e, ok := w.env.Book.Newest(k, page); ok && e.JobID == js.JobID && (js.LastCheckpointTime == nil || e.At.After(js.LastCheckpointTime.Time)) {
		return e.Path, e.At
	}
	if js.LastCheckpointTime == nil {
		return js.LastCheckpointPath, time.Time{}
	}
	return js.LastCheckpointPath, js.LastCheckpointTime.Time
}

// A checkpointing job's record every minute goes to the checkpoint book, a few ConfigMaps of the
// namespace written in batches; status takes the newest checkpoint every tenth record, so that
// what users read of it is at most ten minutes old. The job stays Green throughout: its health
// judges the book's record too.
func TestCheckpointRecordsGoToTheBookAndStatusTakesEveryTenth(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.passes("wc", 5)
	writes := w.crashAtStatusWrite(0, nil)
	w.kube.ClearActions()
	cfg := w.env.Config
	poll := cfg.StatusPollInterval.Duration
	for end := w.clock.Now().Add(30 * time.Minute); w.clock.Now().Before(end); w.clock.Step(poll) {
		w.settle()
		_, _ = w.env.Reconcile(context.Background(), ns, "wc")
	}
	w.settle()
	pageWrites := 0
	for _, a := range w.kube.Actions() {
		if a.GetResource().Resource == "configmaps" && (a.GetVerb() == "patch" || a.GetVerb() == "create") {
			pageWrites++
		}
	}
	// 30 records in 30 minutes: three go to status, the rest to the book.
	assert.LessOrEqual(t, *writes, 4, "status writes in 30 minutes")
	assert.GreaterOrEqual(t, pageWrites, 25, "book writes in 30 minutes")
	got := w.get("wc")
	assert.Equal(t, v1beta1.Green, got.Status.JobStatus.Health)
	assert.NotContains(t, strings.Join(w.events(), "\n"), "JobHealthChanged")
	newest := newestCheckpoint(w.storage, got.Status.JobStatus.JobID)
	require.NotNil(t, newest)
	k := checkpointbook.Key{Namespace: ns, Kind: applicationKindName, Name: "wc"}
	page, err := w.env.Observer.CheckpointBookPage(ns, checkpointbook.PageName(k))
	require.NoError(t, err)
	e, ok := checkpointbook.Read(page, k)
	require.True(t, ok, "the page holds the job's entry")
	assert.Equal(t, got.Status.JobStatus.JobID, e.JobID)
	assert.LessOrEqual(t, newest.CreatedAt.Sub(e.At), cfg.CheckpointRecordInterval.Duration+poll+cfg.CheckpointBookInterval.Duration+10*time.Second)
	assert.Less(t, w.clock.Now().Sub(got.Status.JobStatus.LastCheckpointTime.Time), 11*cfg.CheckpointRecordInterval.Duration,
		"status's checkpoint is at most ten records old")
	t.Logf("%d status writes, %d book writes in 30 minutes; status's checkpoint %s old, the book's %s", *writes, pageWrites,
		w.clock.Now().Sub(got.Status.JobStatus.LastCheckpointTime.Time), w.clock.Now().Sub(e.At))
}

// checkpointStatusInterval sets how often status takes the job's checkpoint while the book carries
// the records between: doubled, a fleet writes status half as often, and status's checkpoint is
// still at most that interval (and a record) old.
func TestCheckpointStatusIntervalSpacesTheStatusRecords(t *testing.T) {
	for _, every := range []time.Duration{10 * time.Minute, 20 * time.Minute} {
		t.Run(every.String(), func(t *testing.T) {
			w := newWorld(t)
			w.env.Config.CheckpointStatusInterval.Duration = every
			running(t, w, "wc")
			w.passes("wc", 5)
			writes := w.crashAtStatusWrite(0, nil)
			poll := w.env.Config.StatusPollInterval.Duration
			oldest := time.Duration(0)
			for end := w.clock.Now().Add(80 * time.Minute); w.clock.Now().Before(end); w.clock.Step(poll) {
				w.settle()
				_, _ = w.env.Reconcile(context.Background(), ns, "wc")
				if at := w.get("wc").Status.JobStatus.LastCheckpointTime; at != nil {
					oldest = max(oldest, w.clock.Now().Sub(at.Time))
				}
			}
			records := int(80 * time.Minute / every)
			assert.LessOrEqual(t, *writes, records+1, "status writes in 80 minutes")
			assert.GreaterOrEqual(t, *writes, records-1, "status writes in 80 minutes")
			assert.LessOrEqual(t, oldest, every+w.env.Config.CheckpointRecordInterval.Duration+2*poll,
				"status's checkpoint is at most the interval and a record old")
			t.Logf("%s: %d status writes in 80 minutes; status's checkpoint at most %s old", every, *writes, oldest)
		})
	}
}

// A page of the book that cannot be written (the operator may not write ConfigMaps there, or the
// page is full) costs its jobs only the book: their records go to status, as before the book.
func TestRecordsGoToStatusWhenTheBookCannotBeWritten(t *testing.T) {
	w := newWorld(t)
	refuse := func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "flinkfsm-checkpoints", errors.New("not allowed"))
	}
	w.kube.PrependReactor("patch", "configmaps", refuse)
	w.kube.PrependReactor("create", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if cm, ok := a.(k8stesting.CreateAction).GetObject().(*corev1.ConfigMap); ok && cm.Labels[checkpointbook.Label] != "" {
			return refuse(a)
		}
		return false, nil, nil
	})
	running(t, w, "wc")
	w.passes("wc", 5)
	writes := w.crashAtStatusWrite(0, nil)
	poll := w.env.Config.StatusPollInterval.Duration
	for end := w.clock.Now().Add(10 * time.Minute); w.clock.Now().Before(end); w.clock.Step(poll) {
		w.settle()
		_, _ = w.env.Reconcile(context.Background(), ns, "wc")
	}
	// One record a minute; every other one is tried in the book first and found unwritten at the
	// next, which records in status.
	assert.GreaterOrEqual(t, *writes, 5, "status writes in 10 minutes with the book failing")
	assert.LessOrEqual(t, *writes, 11)
	assert.Less(t, w.clock.Now().Sub(w.get("wc").Status.JobStatus.LastCheckpointTime.Time), 3*time.Minute)
	assert.Equal(t, v1beta1.Green, w.get("wc").Status.JobStatus.Health)
}

// Applications that reach Running together record their first checkpoints in status together. Their
// later records in status (one in about nine) must not come due together too: at 10,000 applications a
// deploy's worth of them wrote status in the same minute every ten minutes, and the API server's
// load in that minute was the operator's slowest passes. Each job takes its status records at a
// phase of its own, and still never lets status's record grow more than about ten records old.
func TestApplicationsStartedTogetherTakeTheirStatusRecordsInDifferentMinutes(t *testing.T) {
	w := newWorld(t)
	var names []string
	for i := 0; i < 8; i++ {
		names = append(names, fmt.Sprintf("wc%d", i))
		w.create(wordcount(names[i]))
	}
	for end := w.clock.Now().Add(time.Hour); ; w.clock.Step(maxStep) {
		require.True(t, w.clock.Now().Before(end), "all running within a simulated hour")
		w.settle()
		all := true
		for _, n := range names {
			_, _ = w.env.Reconcile(context.Background(), ns, n)
			all = all && w.get(n).Status.Phase == v1beta1.PhaseRunning
		}
		if all {
			break
		}
	}
	cfg := w.env.Config
	poll, window := cfg.StatusPollInterval.Duration, cfg.CheckpointRecordInterval.Duration
	start := w.clock.Now()
	last := map[string]time.Time{}
	oldest := time.Duration(0)
	var taken []time.Duration // when, after start, a job's record went to status (after its first)
	for end := start.Add(40 * time.Minute); w.clock.Now().Before(end); w.clock.Step(poll) {
		w.settle()
		for _, n := range names {
			_, _ = w.env.Reconcile(context.Background(), ns, n)
			at := w.get(n).Status.JobStatus.LastCheckpointTime
			if at == nil {
				continue
			}
			if prev, ok := last[n]; ok && at.Time.After(prev) {
				taken = append(taken, w.clock.Now().Sub(start))
			}
			last[n] = at.Time
			if w.clock.Now().Sub(start) > 2*time.Minute && w.clock.Now().Sub(at.Time) > oldest {
				oldest = w.clock.Now().Sub(at.Time)
			}
		}
	}
	require.GreaterOrEqual(t, len(taken), 2*len(names), "every job takes at least two more records in status in 40 minutes")
	most := 0
	for _, a := range taken {
		in := 0
		for _, b := range taken {
			if b >= a && b < a+2*window {
				in++
			}
		}
		most = max(most, in)
	}
	t.Logf("%d status records of %d jobs in 40 minutes, at most %d in two minutes; status's record at most %s old", len(taken), len(names), most, oldest)
	assert.LessOrEqual(t, most, len(names)/2, "status records of jobs started together, in any two minutes")
	assert.Less(t, oldest, 11*window, "status's checkpoint is at most ten records old")
}
