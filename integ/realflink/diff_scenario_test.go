package realflink

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// diffTarget is one JobManager the differential scenario runs against: real Flink or the simulator
// configured as the same release.
type diffTarget struct {
	url, release string
	// savepointDir is where a savepoint that does not exist would be.
	savepointDir string
	jar          string
	// checkpointEvery is the checkpoint interval the first job asks for (the cluster has none).
	checkpointEvery string
	// incompatible, when set, makes the next restore unmappable: the simulator cannot tell the test
	// job's incompatible-uid build from the normal one, so it is told.
	incompatible func(bool)
}

// recordScenario makes every call of the operator's client against the target, in the situations
// the operator meets, and records each answer's shape (diff_record_test.go).
func recordScenario(t *testing.T, tg diffTarget) recording {
	rec := &recorder{next: http.DefaultTransport.(*http.Transport).Clone(), rec: recording{Release: tg.release}}
	cfg := client.DefaultConfig()
	cfg.Transport = rec
	api := client.New(cfg, nil)
	ctx := context.Background()
	out := t.TempDir()
	url := tg.url
	quiet := func() { rec.mu.Lock(); rec.cur = ""; rec.mu.Unlock() }
	awaitState := func(name, job, state string) {
		rec.begin(name)
		eventually(t, 2*time.Minute, name, func() (bool, error) {
			j, err := api.GetJob(ctx, url, job)
			return err == nil && j.State == state, nil
		})
		quiet()
	}
	awaitRunning := func(job string) {
		quiet()
		eventually(t, 2*time.Minute, "every task of "+job+" running", func() (bool, error) {
			j, err := api.GetJob(ctx, url, job)
			if err != nil || j.State != client.JobRunning || len(j.Vertices) == 0 {
				return false, nil
			}
			for _, v := range j.Vertices {
				if int32(v.Tasks.Running) != v.Parallelism {
					return false, nil
				}
			}
			return true, nil
		})
	}
	run := func(name, job, variant, savepoint string, conf map[string]string) error {
		rec.begin(name)
		_, err := api.SubmitJob(ctx, url, jarIDOf(rec), client.SubmitJobRequest{
			ProgramArgsList: []string{"--out", out, "--rate", "50", "--variant", variant}, Parallelism: 2,
			JobID: job, SavepointPath: savepoint, FlinkConfiguration: conf, FlinkVersion: tg.release,
		})
		return err
	}

	rec.begin("cluster overview")
	if _, err := api.GetClusterOverview(ctx, url); err != nil {
		t.Fatal(err)
	}
	rec.begin("taskmanagers")
	_, _ = api.GetTaskManagers(ctx, url)
	rec.begin("upload the test job")
	f, err := os.Open(tg.jar)
	if err != nil {
		t.Fatal(err)
	}
	jarID, err := api.UploadJar(ctx, url, "flinkfsm-test-job.jar", f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	rec.jarID = jarID

	job := newID(t)
	if err := run("run with a chosen job id", job, "normal", "", map[string]string{"execution.checkpointing.interval": tg.checkpointEvery}); err != nil {
		t.Fatal(err)
	}
	awaitRunning(job)
	_ = run("run again under the same id", job, "normal", "", nil)
	rec.begin("jobs overview")
	_, _ = api.GetJobs(ctx, url)
	rec.begin("details of a running job")
	details, err := api.GetJob(ctx, url, job)
	if err != nil {
		t.Fatal(err)
	}
	rec.begin("exceptions of a running job")
	_, _ = api.GetJobExceptions(ctx, url, job)

	// A second job, without checkpointing: real Flink answers its statistics, with zero counts.
	plain := newID(t)
	if err := run("run without checkpointing", plain, "normal", "", nil); err != nil {
		t.Fatal(err)
	}
	awaitRunning(plain)
	rec.begin("checkpoints of a job without checkpointing")
	_, _ = api.GetCheckpoints(ctx, url, plain)

	quiet()
	eventually(t, time.Minute, "a first checkpoint", func() (bool, error) {
		st, err := api.GetCheckpoints(ctx, url, job)
		return err == nil && st.Counts.Completed > 0 && st.Latest.Completed != nil, nil
	})
	rec.begin("checkpoint statistics")
	_, _ = api.GetCheckpoints(ctx, url, job)

	trigger := newID(t)
	rec.begin("checkpoint trigger with a trigger id")
	_, _ = api.TriggerCheckpoint(ctx, url, job, client.CheckpointRequest{TriggerID: trigger})
	rec.begin("checkpoint trigger with the same trigger id")
	_, _ = api.TriggerCheckpoint(ctx, url, job, client.CheckpointRequest{TriggerID: trigger})
	rec.begin("checkpoint status, completed")
	var cp *client.CheckpointStatus
	eventually(t, time.Minute, "checkpoint "+trigger, func() (bool, error) {
		s, err := api.GetCheckpointStatus(ctx, url, job, trigger)
		cp = s
		return err == nil && s.State != client.SavepointInProgress, nil
	})
	rec.begin("details of a checkpoint just completed")
	_, _ = api.GetCheckpointDetails(ctx, url, job, cp.CheckpointID)
	rec.begin("details of a checkpoint once its statistics show it")
	eventually(t, 30*time.Second, "details of the manual checkpoint", func() (bool, error) {
		_, err := api.GetCheckpointDetails(ctx, url, job, cp.CheckpointID)
		return err == nil, nil
	})

	unknown := newID(t)
	rec.begin("details of an unknown job")
	_, _ = api.GetJob(ctx, url, unknown)
	rec.begin("checkpoints of an unknown job")
	_, _ = api.GetCheckpoints(ctx, url, unknown)
	rec.begin("cancel of an unknown job")
	_ = api.CancelJob(ctx, url, unknown)
	rec.begin("savepoint trigger of an unknown job")
	unknownTrigger, err := api.TriggerSavepoint(ctx, url, unknown, client.SavepointRequest{FlinkVersion: tg.release})
	if err == nil {
		rec.begin("savepoint status of an unknown job")
		eventually(t, time.Minute, "the unknown job's savepoint over", func() (bool, error) {
			s, err := api.GetSavepointStatus(ctx, url, unknown, unknownTrigger)
			return err == nil && !s.InProgress(), nil
		})
	}
	rec.begin("savepoint status under an unknown trigger id")
	_, _ = api.GetSavepointStatus(ctx, url, job, newID(t))

	rec.begin("resource requirements under the default scheduler")
	_, _ = api.GetJobResourceRequirements(ctx, url, job)
	for _, v := range details.Vertices {
		rec.begin("vertex metric names")
		eventually(t, time.Minute, "metric names of vertex "+v.ID, func() (bool, error) {
			n, err := api.VertexMetricNames(ctx, url, job, v.ID)
			return err == nil && contains(n, "busyTimeMsPerSecond"), nil
		})
		rec.begin("vertex metrics")
		_, _ = api.VertexMetrics(ctx, url, job, v.ID, []string{"busyTimeMsPerSecond", "backPressuredTimeMsPerSecond", "idleTimeMsPerSecond"})
	}

	sp := newID(t)
	rec.begin("savepoint trigger with a trigger id")
	if _, err := api.TriggerSavepoint(ctx, url, job, client.SavepointRequest{TriggerID: sp, FlinkVersion: tg.release}); err != nil {
		t.Fatal(err)
	}
	rec.begin("savepoint status, in progress")
	if s, err := api.GetSavepointStatus(ctx, url, job, sp); err != nil || !s.InProgress() {
		rec.forget() // over before it was asked: nothing to compare
	}
	rec.begin("savepoint status, completed")
	var savepoint *client.SavepointStatus
	eventually(t, time.Minute, "savepoint "+sp, func() (bool, error) {
		s, err := api.GetSavepointStatus(ctx, url, job, sp)
		savepoint = s
		return err == nil && !s.InProgress(), nil
	})
	rec.begin("checkpoint statistics just after a savepoint completed")
	_, _ = api.GetCheckpoints(ctx, url, job)
	rec.begin("checkpoint statistics once they show the savepoint")
	eventually(t, 30*time.Second, "the savepoint in the statistics", func() (bool, error) {
		st, err := api.GetCheckpoints(ctx, url, job)
		return err == nil && st.Latest.Savepoint != nil, nil
	})

	// Restores that cannot start: Flink refuses them in the run request, then lists the job FAILED.
	broken := newID(t)
	_ = run("run from a missing savepoint", broken, "normal", "file:"+filepath.Join(tg.savepointDir, "savepoint-000000-000000000000"), nil)
	awaitState("the job refused for a missing savepoint", broken, client.JobFailed)
	rec.begin("exceptions of the job refused for a missing savepoint")
	_, _ = api.GetJobExceptions(ctx, url, broken)
	rec.begin("cancel of a failed job")
	_ = api.CancelJob(ctx, url, broken)
	_ = run("run again under the refused job's id", broken, "normal", "", nil)
	uid := newID(t)
	if tg.incompatible != nil {
		tg.incompatible(true)
	}
	_ = run("run an incompatible build from the savepoint", uid, "incompatible-uid", savepoint.Location, nil)
	if tg.incompatible != nil {
		tg.incompatible(false)
	}
	awaitState("the job refused for incompatible state", uid, client.JobFailed)

	stop := newID(t)
	rec.begin("stop with a savepoint")
	if _, err := api.TriggerSavepoint(ctx, url, plain, client.SavepointRequest{TriggerID: stop, CancelJob: true, FlinkVersion: tg.release}); err != nil {
		t.Fatal(err)
	}
	rec.begin("stop with a savepoint, completed")
	eventually(t, time.Minute, "stop with savepoint "+stop, func() (bool, error) {
		s, err := api.GetSavepointStatus(ctx, url, plain, stop)
		return err == nil && !s.InProgress(), nil
	})
	awaitState("the job stopped with a savepoint", plain, client.JobCanceled)

	rec.begin("dispose of a savepoint")
	_ = api.DisposeSavepoint(ctx, url, savepoint.Location)

	rec.begin("cancel of a running job")
	_ = api.CancelJob(ctx, url, job)
	awaitState("the canceled job", job, client.JobCanceled)
	rec.begin("cancel of a canceled job")
	_ = api.CancelJob(ctx, url, job)

	rec.begin("applications overview")
	_, _ = api.GetApplications(ctx, url)
	app := newID(t)
	rec.begin("an unknown application")
	if _, err := api.GetApplication(ctx, url, app); client.IsJobNotFound(err, app) {
		t.Errorf("Flink %s: the answer to an unknown application %v passes for a job not found", tg.release, err)
	}

	rec.begin("delete the jar")
	_ = api.DeleteJar(ctx, url, jarID)
	rec.begin("delete the jar again")
	_ = api.DeleteJar(ctx, url, jarID)
	quiet()
	return rec.rec
}

func jarIDOf(r *recorder) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.jarID
}
