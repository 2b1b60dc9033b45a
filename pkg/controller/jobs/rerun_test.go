package jobs

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	testclock "k8s.io/utils/clock/testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// haBenchOn23 is a bench whose JobManager speaks Flink 2.3 with Kubernetes HA.
func haBenchOn23(t *testing.T) *bench {
	clk := testclock.NewFakeClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	jm := flinksim.NewJobManager(flinksim.Options{Clock: clk, TaskManagers: 2, FlinkVersion: "2.3", FlinkConfig: map[string]string{
		"state.savepoints.dir": "s3://b/savepoints", "state.checkpoints.dir": "s3://b/checkpoints",
		"taskmanager.numberOfTaskSlots": "2", "execution.checkpointing.interval": "10s",
		"high-availability.type": "kubernetes", "kubernetes.cluster-id": "wc-1",
	}})
	srv := httptest.NewServer(jm.Handler())
	t.Cleanup(srv.Close)
	return &bench{t: t, clock: clk, jm: jm, api: client.New(client.DefaultConfig(), nil), url: srv.URL}
}

func (b *bench) pass23() *Pass {
	p := NewPass(context.Background(), b.api, b.clock.Now(), Clusters{
		URL:            func(string) string { return b.url },
		JobManagerGone: func(string) bool { return b.gone },
		FlinkVersion:   func(string) string { return "2.3" },
	})
	p.Announce = func(e Event) { b.events = append(b.events, e) }
	return p
}

func (b *bench) run23(o Owner, job *Job) {
	b.t.Helper()
	for i := 0; i < 50; i++ {
		step := b.pass23().Run(o, job, Submission{JarID: "wc.jar", Parallelism: 2}, limits)
		require.Empty(b.t, step.Failure)
		if step.Running {
			return
		}
		b.step(500 * time.Millisecond)
	}
	b.t.Fatalf("job %s never ran stable; events %s", job.ID, b.reasons())
}

// A job its JobManager does not know is stopped only when its application is over or unknown too:
// while Flink 2.3 runs the application again, the job is Unknown, and the job it runs instead is
// named for its owner to follow.
func TestAJobIsGoneOnFlink23OnlyWhenItsApplicationIsToo(t *testing.T) {
	b := haBenchOn23(t)
	job := &Job{Cluster: "c"}
	b.run23(app("u1"), job)
	first := job.ID

	b.jm.SetFaults(flinksim.Faults{RerunUnderNewJobID: true, RerunTakes: 10 * time.Second})
	b.jm.Crash()
	v := b.pass23().View("c", first)
	assert.Equal(t, Unknown, v.Liveness, v.Evidence)
	assert.Empty(t, v.Rerun)
	step := b.pass23().Run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2}, limits)
	require.NotNil(t, step.Wait)
	assert.False(t, step.Wait.Persist)
	assert.Empty(t, b.jm.Jobs(), "nothing submitted while Flink runs the application again")

	b.step(10 * time.Second)
	v = b.pass23().View("c", first)
	require.NotEmpty(t, v.Rerun, v.Evidence)
	assert.Equal(t, Unknown, v.Liveness)
	step = b.pass23().Run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2}, limits)
	require.NotNil(t, step.Wait)
	assert.True(t, step.Wait.Persist, "the re-run job is recorded before anything acts on it")
	assert.Equal(t, v.Rerun, job.ID)
	assert.Contains(t, b.reasons(), "JobRerun")
	b.run23(app("u1"), job)
	require.Len(t, b.jm.Jobs(), 1)

	// Without HA the JobManager that takes over knows neither the job nor its application.
	b.jm.SetFaults(flinksim.Faults{})
	lost := newBench(t)
	lostJob := &Job{Cluster: "c"}
	lost.run(app("u1"), lostJob, Submission{JarID: "wc.jar", Parallelism: 2})
	lost.jm.Crash()
	assert.Equal(t, Stopped, lost.pass().View("c", lostJob.ID).Liveness, "before 2.3 and without HA, as before")
}

// Before a submission on Flink 2.3 the fence adopts the live job of a running application of the
// owner's, whatever its id, and submits nothing while such an application has no job.
func TestTheFenceOnFlink23HoldsForTheOwnersRunningApplications(t *testing.T) {
	b := haBenchOn23(t)
	old := &Job{Cluster: "c"}
	b.run23(app("u1"), old)
	b.jm.SetFaults(flinksim.Faults{RerunUnderNewJobID: true, RerunTakes: 10 * time.Second})
	b.jm.Crash()

	// A new start under a new id (the record of the old job was lost or cleared).
	job := &Job{Cluster: "c", ID: app("u1").NewJobID()}
	step := b.pass23().Run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2}, limits)
	require.NotNil(t, step.Wait)
	require.Error(t, step.Wait.Err)
	assert.Contains(t, step.Wait.Err.Error(), "not submitting beside it")
	assert.Empty(t, b.jm.Jobs())

	b.step(10 * time.Second)
	step = b.pass23().Run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2}, limits)
	require.NotNil(t, step.Wait)
	assert.True(t, step.Wait.Persist)
	require.Len(t, b.jm.Jobs(), 1)
	assert.Equal(t, b.jm.Jobs()[0].ID, job.ID, "the job Flink re-ran is adopted")
	assert.Contains(t, b.reasons(), "JobAdopted")

	// On a session cluster another owner's application is not this owner's to adopt or wait for.
	other := Owner{Name: "FlinkSessionJob/ns/other", UID: "u2", SharedCluster: true}
	b.run23(other, &Job{Cluster: "c", ID: other.NewJobID()})
	assert.Len(t, b.jm.Jobs(), 2)
}

// A job Flink ran again under a new id keeps running in the application of the job it replaced:
// after the next failover the JobManager knows neither the new id nor an application of that id
// while the application runs again, and the job is Unknown, never gone (explorer seed 11000453:
// taken for gone, the session job was submitted again beside the next rerun).
func TestAJobFlink23RanAgainIsWeighedByTheApplicationItRunsIn(t *testing.T) {
	b := haBenchOn23(t)
	job := &Job{Cluster: "c"}
	pass := func() *Pass {
		p := b.pass23()
		p.clusters.ApplicationOf = func(_, id string) string {
			if id == job.ID {
				return job.Application
			}
			return ""
		}
		return p
	}
	b.run23(app("u1"), job)
	first := job.ID
	b.jm.SetFaults(flinksim.Faults{RerunUnderNewJobID: true, RerunTakes: 10 * time.Second})
	b.jm.Crash()
	b.step(10 * time.Second)
	step := pass().Run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2}, limits)
	require.NotNil(t, step.Wait)
	require.NotEqual(t, first, job.ID, "the rerun is followed")
	assert.Equal(t, first, job.Application, "in the application of the job it replaced")

	b.jm.Crash()
	v := pass().View("c", job.ID)
	assert.Equal(t, Unknown, v.Liveness, v.Evidence)
	step = pass().Run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2}, limits)
	require.NotNil(t, step.Wait)
	assert.Empty(t, b.jm.Jobs(), "nothing submitted while Flink runs the application again")
	b.step(10 * time.Second)
	v = pass().View("c", job.ID)
	require.NotEmpty(t, v.Rerun, v.Evidence)
}

// After a failover Flink's checkpoint statistics start again: until the job completes another
// checkpoint they name its newest one only as restored, which AskFlinkState reports (Restored).
func TestFlinksAnswerNamesTheCheckpointAJobRestoredAtAFailover(t *testing.T) {
	b := haBenchOn23(t)
	job := &Job{Cluster: "c"}
	b.run23(app("u1"), job)
	b.step(20*time.Second + 200*time.Millisecond)
	b.jm.Crash()
	b.step(time.Second)
	answer, err := b.pass23().AskFlinkState(b.pass23().Ref("c", job.ID))
	require.NoError(t, err)
	require.NotNil(t, answer.Restored, "points %v", answer.Points)
	assert.Contains(t, answer.Restored.Path, "/"+job.ID+"/chk-")
	assert.Empty(t, answer.Points, "no checkpoint completed since the failover")
}

// On Flink 2.3 a run refused because its restore cannot start lists its job FAILED in an
// application that stays RUNNING for good (real 2.3.0 does). That application's work is over: it
// does not hold back the owner's next submission on the cluster.
func TestTheRunningApplicationOfARefusedRunDoesNotHoldBackTheNextSubmission(t *testing.T) {
	b := haBenchOn23(t)
	refused := &Job{Cluster: "c", ID: app("u1").NewJobID()}
	var step RunStep
	for i := 0; i < 20 && step.Failure == ""; i++ {
		step = b.pass23().Run(app("u1"), refused, Submission{JarID: "wc.jar", Parallelism: 2, RestorePath: "s3://b/savepoints/savepoint-gone"}, limits)
		b.step(500 * time.Millisecond)
	}
	require.NotEmpty(t, step.Failure, "the run from a savepoint that is not there is refused")

	next := &Job{Cluster: "c", ID: app("u1").NewJobID()}
	b.run23(app("u1"), next)
	assert.Equal(t, Alive, b.pass23().View("c", next.ID).Liveness)
	v := b.pass23().View("c", refused.ID)
	assert.Equal(t, Stopped, v.Liveness, v.Evidence)
}
