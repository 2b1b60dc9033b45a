package realflink

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// Real Flink's answers to the calls the operator makes, read by the operator's own client: every
// field it decodes and every predicate it branches on (IsJobNotFound, IsDuplicateSubmission,
// IsConflict, IsJarNotFound, IsUnsupported) hold for what a real JobManager says. Each mismatch is
// reported on its own, so one run lists them all.
func TestRealFlinkAnswersEveryCallAsTheClientReadsIt(t *testing.T) {
	eachRelease(t, func(t *testing.T, d Dist, jar string) {
		began := time.Now()
		c := Start(t, d, Options{Config: map[string]string{"execution.checkpointing.interval": "2s"}})
		api := client.New(client.DefaultConfig(), nil)
		ctx := context.Background()
		out := t.TempDir()
		args := []string{"--out", out, "--rate", "50"}

		ov, err := api.GetClusterOverview(ctx, c.URL)
		if err != nil || ov.FlinkVersion != d.Version || ov.TaskManagers != 1 || ov.SlotsTotal != 2 {
			t.Errorf("overview: %+v, %v; want Flink %s, 1 TaskManager, 2 slots", ov, err, d.Version)
		}
		tms, err := api.GetTaskManagers(ctx, c.URL)
		if err != nil || len(tms) != 1 || tms[0].SlotsNumber != 2 || tms[0].Path == "" || tms[0].DataPort <= 0 ||
			tms[0].Hardware.CPUCores <= 0 {
			t.Errorf("taskmanagers: %+v, %v", tms, err)
		}

		f, err := os.Open(jar)
		if err != nil {
			t.Fatal(err)
		}
		jarID, err := api.UploadJar(ctx, c.URL, "flinkfsm-test-job.jar", f)
		f.Close()
		if err != nil || !strings.HasSuffix(jarID, "_flinkfsm-test-job.jar") {
			t.Fatalf("upload: %q, %v; want <uuid>_flinkfsm-test-job.jar", jarID, err)
		}
		job := newID(t)
		submit := client.SubmitJobRequest{ProgramArgsList: args, Parallelism: 2, JobID: job, FlinkVersion: d.Version}
		if _, err := api.SubmitJob(ctx, c.URL, jarID, submit); err != nil {
			t.Fatal(err)
		}
		awaitTasksRunning(t, api, c, job, time.Minute)
		if _, err := api.SubmitJob(ctx, c.URL, jarID, submit); !client.IsDuplicateSubmission(err) || client.IsRetryable(err) {
			t.Errorf("duplicate submission: %v; want IsDuplicateSubmission and not retryable", err)
		} else {
			t.Logf("Flink %s refuses a duplicate job id with: %v", d.Version, err)
		}

		jobs, err := api.GetJobs(ctx, c.URL)
		if err != nil || !hasJob(jobs, job, client.JobRunning) {
			t.Errorf("jobs: %+v, %v; want %s RUNNING", jobs, err, job)
		}
		details, err := api.GetJob(ctx, c.URL, job)
		if err != nil {
			t.Fatal(err)
		}
		if details.JID != job || details.Name != "flinkfsm-test-job normal" || details.JobType != "STREAMING" ||
			details.Timestamps.Running <= 0 || details.EndTime != -1 || details.Parallelism() != 2 || len(details.Vertices) != 2 {
			t.Errorf("job details: %+v", details)
		}
		var source, counter string
		for _, v := range details.Vertices {
			if strings.HasPrefix(v.Name, "Source: sequence") {
				source = v.ID
			} else if strings.HasPrefix(v.Name, "keyed-counter") {
				counter = v.ID
			}
		}
		if up := details.Upstream(); len(up[counter]) != 1 || up[counter][0] != source {
			t.Errorf("the plan says the counter %s reads from %v, want the source %s", counter, up[counter], source)
		}
		if ex, err := api.GetJobExceptions(ctx, c.URL, job); err != nil || len(ex.ExceptionHistory.Entries) != 0 {
			t.Errorf("exceptions of a healthy job: %+v, %v", ex, err)
		}

		// A job the JobManager does not know: its 404 must name the job, which is what lets the
		// operator take it as evidence that the job is gone.
		unknown := newID(t)
		if _, err := api.GetJob(ctx, c.URL, unknown); !client.IsJobNotFound(err, unknown) {
			t.Errorf("GetJob of an unknown job: %v; want IsJobNotFound", err)
		}
		if _, err := api.GetCheckpoints(ctx, c.URL, unknown); !client.IsJobNotFound(err, unknown) {
			t.Errorf("GetCheckpoints of an unknown job: %v; want IsJobNotFound", err)
		}
		if err := api.CancelJob(ctx, c.URL, unknown); !client.IsJobNotFound(err, unknown) || client.IsRetryable(err) {
			t.Errorf("CancelJob of an unknown job: %v; want a final IsJobNotFound", err)
		}
		if trig, err := api.TriggerSavepoint(ctx, c.URL, unknown, client.SavepointRequest{FlinkVersion: d.Version}); err != nil {
			t.Errorf("savepoint trigger of an unknown job: %v; want it accepted, failing in its status", err)
		} else if st := awaitSavepoint(t, api, c, unknown, trig, 30*time.Second); !st.Failed() || !strings.Contains(st.FailureCause, "FlinkJobNotFoundException") {
			t.Errorf("savepoint of an unknown job: %+v; want failed with FlinkJobNotFoundException", st)
		}

		// A manual checkpoint under the caller's trigger id, and its path from its statistics.
		eventually(t, time.Minute, "a first checkpoint", func() (bool, error) {
			st, err := api.GetCheckpoints(ctx, c.URL, job)
			return err == nil && st.Counts.Completed > 0, err
		})
		trigger := newID(t)
		for i := 0; i < 2; i++ {
			if got, err := api.TriggerCheckpoint(ctx, c.URL, job, client.CheckpointRequest{TriggerID: trigger}); err != nil || got != trigger {
				t.Errorf("checkpoint trigger %d: %q, %v; want %s", i+1, got, err, trigger)
			}
		}
		var cp *client.CheckpointStatus
		eventually(t, 30*time.Second, "manual checkpoint "+trigger, func() (bool, error) {
			s, err := api.GetCheckpointStatus(ctx, c.URL, job, trigger)
			cp = s
			return err == nil && s.State != client.SavepointInProgress, err
		})
		if !cp.Succeeded() {
			t.Errorf("manual checkpoint: %+v", cp)
		} else {
			// Its statistics come from the same cache as the job's (web.refresh-interval): a 404 first.
			var det *client.Checkpoint
			eventually(t, 10*time.Second, "details of checkpoint "+strconv.FormatInt(cp.CheckpointID, 10), func() (bool, error) {
				d, err := api.GetCheckpointDetails(ctx, c.URL, job, cp.CheckpointID)
				det = d
				return err == nil, err
			})
			if det.Status != "COMPLETED" || det.IsSavepoint ||
				!strings.HasSuffix(det.ExternalPath, filepath.Join(c.CheckpointDir, job, "chk-")+strconv.FormatInt(cp.CheckpointID, 10)) {
				t.Errorf("details of checkpoint %d: %+v; want COMPLETED under %s", cp.CheckpointID, det, c.CheckpointDir)
			}
		}

		// Resource requirements: the default scheduler does not serve them, and says so.
		if req, err := api.GetJobResourceRequirements(ctx, c.URL, job); err != nil && !client.IsUnsupported(err) {
			t.Errorf("resource requirements: %v; want them, or IsUnsupported", err)
		} else {
			t.Logf("Flink %s resource requirements under the default scheduler: %v, %v", d.Version, req, err)
		}

		// Vertex metrics, which Flink refreshes every 10 s.
		for _, v := range []string{source, counter} {
			var names []string
			eventually(t, time.Minute, "metric names of vertex "+v, func() (bool, error) {
				n, err := api.VertexMetricNames(ctx, c.URL, job, v)
				names = n
				return err == nil && contains(n, "busyTimeMsPerSecond"), err
			})
			want := []string{"busyTimeMsPerSecond", "backPressuredTimeMsPerSecond", "idleTimeMsPerSecond"}
			m, err := api.VertexMetrics(ctx, c.URL, job, v, want)
			if err != nil || len(m) != len(want) {
				t.Errorf("metrics %v of vertex %s: %+v, %v (it lists %d names)", want, v, m, err, len(names))
			}
		}

		// A restore from a savepoint that does not exist. The run handler waits for the job's
		// initialisation, so the answer is a final 400 naming the path, not the 200 of REST.md; and the
		// job stays listed, FAILED, under the id asked for.
		broken := newID(t)
		missing := "file:" + filepath.Join(c.SavepointDir, "savepoint-000000-000000000000")
		_, err = api.SubmitJob(ctx, c.URL, jarID, client.SubmitJobRequest{ProgramArgsList: args, Parallelism: 2,
			JobID: broken, SavepointPath: missing, FlinkVersion: d.Version})
		if !hasStatus(err, 400) || client.IsRetryable(err) || !strings.Contains(err.Error(), "savepoint-000000-000000000000") {
			t.Errorf("submission from a missing savepoint: %v; want a final 400 naming the path", err)
		}
		awaitJobState(t, api, c, broken, client.JobFailed, time.Minute)
		ex, err := api.GetJobExceptions(ctx, c.URL, broken)
		if err != nil || len(ex.ExceptionHistory.Entries) == 0 || !strings.Contains(ex.ExceptionHistory.Entries[0].Stacktrace, "savepoint-000000-000000000000") {
			t.Errorf("exceptions of a job restored from a missing savepoint: %+v, %v; want the path named", ex, err)
		}
		if err := api.CancelJob(ctx, c.URL, broken); !client.IsConflict(err) {
			t.Errorf("cancelling a FAILED job: %v; want IsConflict", err)
		}
		if _, err := api.SubmitJob(ctx, c.URL, jarID, client.SubmitJobRequest{ProgramArgsList: args, Parallelism: 2,
			JobID: broken, FlinkVersion: d.Version}); !client.IsDuplicateSubmission(err) {
			t.Errorf("the failed job's id again: %v; want IsDuplicateSubmission", err)
		}

		// A savepoint, then disposed of: its files go.
		sp := newID(t)
		if _, err := api.TriggerSavepoint(ctx, c.URL, job, client.SavepointRequest{TriggerID: sp, FlinkVersion: d.Version}); err != nil {
			t.Fatal(err)
		}
		st := awaitSavepoint(t, api, c, job, sp, time.Minute)
		if !st.Succeeded() {
			t.Fatalf("savepoint: %+v", st)
		}
		if err := api.DisposeSavepoint(ctx, c.URL, st.Location); err != nil {
			t.Errorf("disposing of %s: %v", st.Location, err)
		}
		eventually(t, 30*time.Second, "the disposed savepoint's files gone", func() (bool, error) {
			_, err := os.Stat(strings.TrimPrefix(st.Location, "file:"))
			return os.IsNotExist(err), nil
		})

		// A TaskManager's last heartbeat (0 until its first, heartbeat.interval after it registered).
		if tms, err := api.GetTaskManagers(ctx, c.URL); err != nil || len(tms) != 1 ||
			tms[0].TimeSinceLastHeartbeat < time.Now().Add(-time.Minute).UnixMilli() || tms[0].FreeSlots != 0 {
			t.Errorf("taskmanagers while the job runs: %+v, %v; want a recent heartbeat and no free slot", tms, err)
		}
		if err := api.CancelJob(ctx, c.URL, job); err != nil {
			t.Errorf("cancel: %v", err)
		}
		awaitJobState(t, api, c, job, client.JobCanceled, time.Minute)
		if err := api.CancelJob(ctx, c.URL, job); err != nil {
			t.Errorf("cancelling a CANCELED job again: %v; want it accepted", err)
		}
		if err := api.DeleteJar(ctx, c.URL, jarID); err != nil {
			t.Errorf("deleting the jar: %v", err)
		}
		if err := api.DeleteJar(ctx, c.URL, jarID); !client.IsJarNotFound(err) {
			t.Errorf("deleting the jar again: %v; want IsJarNotFound", err)
		}
		t.Logf("Flink %s answers: %s, %s", d.Version, time.Since(began).Round(time.Millisecond), c.Memory())
	})
}

func hasStatus(err error, code int) bool {
	var e *client.Error
	return errors.As(err, &e) && e.StatusCode == code
}

func hasJob(jobs []client.JobSummary, id, status string) bool {
	for _, j := range jobs {
		if j.ID == id && j.Status == status {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
