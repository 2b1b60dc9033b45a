package realflink

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

const testKeys = 8

// On real Flink, through the operator's own client: a job submitted with the id the operator chose,
// savepointed with an idempotent trigger id, cancelled, and submitted again from the savepoint goes
// on with exactly the state the savepoint held, as the test job's output proves.
func TestARestoredJobGoesOnWithExactlyTheStateItsSavepointHeld(t *testing.T) {
	eachRelease(t, func(t *testing.T, d Dist, jar string) {
		began := time.Now()
		c := Start(t, d, Options{Config: map[string]string{
			"execution.checkpointing.interval": "1s",
		}})
		t.Logf("Flink %s up in %s", d.Version, time.Since(began).Round(time.Millisecond))
		api := client.New(client.DefaultConfig(), nil)
		ctx := context.Background()
		out := t.TempDir()
		args := []string{"--out", out, "--keys", "8", "--rate", "200"}

		f, err := os.Open(jar)
		if err != nil {
			t.Fatal(err)
		}
		jarID, err := api.UploadJar(ctx, c.URL, "flinkfsm-test-job.jar", f)
		f.Close()
		if err != nil {
			t.Fatalf("uploading the test job: %v", err)
		}

		// The first job, under the id the operator chose.
		first := newID(t)
		got, err := api.SubmitJob(ctx, c.URL, jarID, client.SubmitJobRequest{
			ProgramArgsList: args, Parallelism: 2, JobID: first, FlinkVersion: d.Version,
		})
		if err != nil || got != first {
			t.Fatalf("submitting job %s: got %q, %v", first, got, err)
		}
		awaitTasksRunning(t, api, c, first, time.Minute)

		// The same id again is refused, and not as something to retry.
		if _, err := api.SubmitJob(ctx, c.URL, jarID, client.SubmitJobRequest{
			ProgramArgsList: args, Parallelism: 2, JobID: first, FlinkVersion: d.Version,
		}); err == nil || client.IsRetryable(err) || !strings.Contains(err.Error(), "already been submitted") {
			t.Errorf("a second submission of job %s: %v (retryable %v), want a final refusal naming the duplicate", first, err, client.IsRetryable(err))
		}

		eventually(t, time.Minute, "two checkpoints of job "+first, func() (bool, error) {
			st, err := api.GetCheckpoints(ctx, c.URL, first)
			return err == nil && st.Counts.Completed >= 2, err
		})

		// A savepoint under a trigger id of the operator's: triggering it again is the same savepoint.
		trigger := newID(t)
		for i := 0; i < 2; i++ {
			got, err := api.TriggerSavepoint(ctx, c.URL, first, client.SavepointRequest{TriggerID: trigger, FlinkVersion: d.Version})
			if err != nil || got != trigger {
				t.Fatalf("savepoint trigger %d of job %s: got %q, %v; want the trigger id %s", i+1, first, got, err, trigger)
			}
		}
		sp := awaitSavepoint(t, api, c, first, trigger, time.Minute)
		if !sp.Succeeded() {
			t.Fatalf("savepoint of job %s: %+v", first, sp)
		}
		// Flink serves checkpoint statistics from a cache (web.refresh-interval, 3 s), so the savepoint
		// shows there a moment after its operation completed.
		var stats *client.CheckpointStats
		eventually(t, 10*time.Second, "the savepoint in the checkpoint statistics of job "+first, func() (bool, error) {
			st, err := api.GetCheckpoints(ctx, c.URL, first)
			stats = st
			return err == nil && st.Latest.Savepoint != nil, err
		})
		saved := stats.Latest.Savepoint
		if saved.ExternalPath != sp.Location || !saved.IsSavepoint {
			t.Fatalf("checkpoint statistics of job %s: latest savepoint %+v, want %s", first, saved, sp.Location)
		}
		savepoints := 0
		for _, h := range stats.History {
			if h.IsSavepoint {
				savepoints++
			}
		}
		if savepoints != 1 {
			t.Errorf("job %s took %d savepoints for one trigger id triggered twice, want 1", first, savepoints)
		}
		if _, err := api.GetSavepointStatus(ctx, c.URL, first, newID(t)); !client.IsNotFound(err) || client.IsRetryable(err) {
			t.Errorf("polling a trigger id Flink never saw: %v (retryable %v), want a final 404", err, client.IsRetryable(err))
		}

		if err := api.CancelJob(ctx, c.URL, first); err != nil {
			t.Fatalf("cancelling job %s: %v", first, err)
		}
		awaitJobState(t, api, c, first, client.JobCanceled, time.Minute)

		before, err := ReadJobOutput(out, first)
		if err != nil {
			t.Fatal(err)
		}
		resume, ok := before.ResumePosition(saved.ID)
		if !ok {
			t.Fatalf("job %s wrote no position for its savepoint %d (it wrote %v)", first, saved.ID, before.Highest)
		}
		check(t, before.CheckCounts(testKeys), before.CheckExactlyFrom(0, resume))

		// The second job, from the savepoint.
		second := newID(t)
		if got, err := api.SubmitJob(ctx, c.URL, jarID, client.SubmitJobRequest{
			ProgramArgsList: args, Parallelism: 2, JobID: second, SavepointPath: sp.Location, FlinkVersion: d.Version,
		}); err != nil || got != second {
			t.Fatalf("submitting job %s from %s: got %q, %v", second, sp.Location, got, err)
		}
		awaitTasksRunning(t, api, c, second, time.Minute)
		var later *client.Checkpoint
		eventually(t, time.Minute, "a checkpoint of job "+second+" after its restore", func() (bool, error) {
			st, err := api.GetCheckpoints(ctx, c.URL, second)
			if err != nil {
				return false, err
			}
			if r := st.Latest.Restored; r == nil || r.ID != saved.ID || !r.IsSavepoint || r.ExternalPath != sp.Location {
				return false, nil
			}
			later = st.Latest.Completed
			return later != nil && later.ID > saved.ID, nil
		})

		// Stopped by a savepoint that cancels it, as a suspend does.
		stop := newID(t)
		if _, err := api.TriggerSavepoint(ctx, c.URL, second, client.SavepointRequest{TriggerID: stop, CancelJob: true, FlinkVersion: d.Version}); err != nil {
			t.Fatal(err)
		}
		if st := awaitSavepoint(t, api, c, second, stop, time.Minute); !st.Succeeded() {
			t.Fatalf("savepoint cancelling job %s: %+v", second, st)
		}
		awaitJobState(t, api, c, second, client.JobCanceled, time.Minute)

		after, err := ReadJobOutput(out, second)
		if err != nil {
			t.Fatal(err)
		}
		upTo, ok := after.ResumePosition(later.ID)
		if !ok {
			t.Fatalf("job %s wrote no position for checkpoint %d (it wrote %v)", second, later.ID, after.Highest)
		}
		check(t, after.CheckCounts(testKeys), after.CheckExactlyFrom(resume, upTo))
		t.Logf("Flink %s: job %s counted 0..%d, its savepoint %d held 0..%d, job %s went on from %d to %d (checkpoint %d held 0..%d)",
			d.Version, first, before.HighestCounted(), saved.ID, resume-1, second, resume, after.HighestCounted(), later.ID, upTo-1)
		t.Logf("Flink %s scenario: %s, %s", d.Version, time.Since(began).Round(time.Millisecond), c.Memory())
	})
}

func check(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}
