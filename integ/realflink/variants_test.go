package realflink

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// The test job's other builds do on real Flink what integ/flinkjob/README.md says: the incompatible
// ones cannot take the normal job's savepoint (one refused before it runs, one failing as its tasks
// open their state), and the throttled one backpressures its source.
func TestTheTestJobsIncompatibleBuildsRefuseItsSavepointAndTheThrottledOneBackpressures(t *testing.T) {
	eachRelease(t, func(t *testing.T, d Dist, jar string) {
		began := time.Now()
		c := Start(t, d, Options{Config: map[string]string{
			"execution.checkpointing.interval":      "2s",
			"restart-strategy.type":                 "fixed-delay",
			"restart-strategy.fixed-delay.attempts": "1",
			"restart-strategy.fixed-delay.delay":    "1s",
		}})
		api := client.New(client.DefaultConfig(), nil)
		ctx := context.Background()
		out := t.TempDir()
		f, err := os.Open(jar)
		if err != nil {
			t.Fatal(err)
		}
		jarID, err := api.UploadJar(ctx, c.URL, "flinkfsm-test-job.jar", f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		run := func(variant, savepoint string) (string, error) {
			id := newID(t)
			_, err := api.SubmitJob(ctx, c.URL, jarID, client.SubmitJobRequest{
				ProgramArgsList: []string{"--out", out, "--variant", variant}, Parallelism: 2, JobID: id,
				SavepointPath: savepoint, FlinkVersion: d.Version,
			})
			return id, err
		}

		normal, err := run("normal", "")
		if err != nil {
			t.Fatal(err)
		}
		awaitTasksRunning(t, api, c, normal, time.Minute)
		trigger := newID(t)
		if _, err := api.TriggerSavepoint(ctx, c.URL, normal, client.SavepointRequest{TriggerID: trigger, CancelJob: true, FlinkVersion: d.Version}); err != nil {
			t.Fatal(err)
		}
		sp := awaitSavepoint(t, api, c, normal, trigger, time.Minute)
		if !sp.Succeeded() {
			t.Fatalf("savepoint: %+v", sp)
		}
		awaitJobState(t, api, c, normal, client.JobCanceled, time.Minute)

		// A changed uid: the JobMaster cannot map the counter's state, and the run handler, which waits
		// for the job's initialisation, says so.
		uid, err := run("incompatible-uid", sp.Location)
		if !hasStatus(err, 400) || client.IsRetryable(err) || !strings.Contains(err.Error(), "Failed to rollback to checkpoint/savepoint") {
			t.Errorf("the incompatible-uid build from the savepoint: %v; want a final 400 saying the state cannot be mapped", err)
		}
		awaitJobState(t, api, c, uid, client.JobFailed, time.Minute)
		if ex, err := api.GetJobExceptions(ctx, c.URL, uid); err != nil || len(ex.ExceptionHistory.Entries) == 0 ||
			!strings.Contains(ex.ExceptionHistory.Entries[0].Stacktrace, "Cannot map checkpoint/savepoint state for operator") {
			t.Errorf("exceptions of the incompatible-uid build: %+v, %v", ex, err)
		}

		// A changed state type: accepted, then its tasks fail opening the state, until the restart
		// strategy gives up.
		state, err := run("incompatible-state", sp.Location)
		if err != nil {
			t.Fatalf("the incompatible-state build from the savepoint: %v; want it accepted", err)
		}
		awaitJobState(t, api, c, state, client.JobFailed, 2*time.Minute)
		if ex, err := api.GetJobExceptions(ctx, c.URL, state); err != nil || len(ex.ExceptionHistory.Entries) == 0 ||
			!strings.Contains(ex.ExceptionHistory.Entries[0].Stacktrace, "StateMigrationException") {
			t.Errorf("exceptions of the incompatible-state build: %+v, %v", ex, err)
		}

		// The throttled build: its counter takes longer per record than the source's rate allows.
		throttled, err := run("throttled", "")
		if err != nil {
			t.Fatal(err)
		}
		awaitTasksRunning(t, api, c, throttled, time.Minute)
		job, err := api.GetJob(ctx, c.URL, throttled)
		if err != nil {
			t.Fatal(err)
		}
		var source, counter string
		for _, v := range job.Vertices {
			if strings.HasPrefix(v.Name, "Source: sequence") {
				source = v.ID
			} else {
				counter = v.ID
			}
		}
		var backpressured, busy float64
		eventually(t, 90*time.Second, "the throttled build's source backpressured", func() (bool, error) {
			m, err := api.VertexMetrics(ctx, c.URL, throttled, source, []string{"backPressuredTimeMsPerSecond"})
			if err != nil {
				return false, err
			}
			backpressured = m["backPressuredTimeMsPerSecond"].Max
			n, err := api.VertexMetrics(ctx, c.URL, throttled, counter, []string{"busyTimeMsPerSecond"})
			if err != nil {
				return false, err
			}
			busy = n["busyTimeMsPerSecond"].Max
			return backpressured > 500 && busy > 500, nil
		})
		t.Logf("Flink %s throttled build: source backpressured %.0f ms/s, counter busy %.0f ms/s", d.Version, backpressured, busy)
		if err := api.CancelJob(ctx, c.URL, throttled); err != nil {
			t.Error(err)
		}
		awaitJobState(t, api, c, throttled, client.JobCanceled, time.Minute)
		t.Logf("Flink %s variants: %s, %s", d.Version, time.Since(began).Round(time.Millisecond), c.Memory())
	})
}
