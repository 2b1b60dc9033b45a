package jobs

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	testclock "k8s.io/utils/clock/testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// bench is one simulated JobManager on a fake clock, reached over HTTP by the operator's client:
// the job core's operations are driven against it one pass at a time.
type bench struct {
	t      *testing.T
	clock  *testclock.FakeClock
	jm     *flinksim.JobManager
	api    client.API
	url    string
	gone   bool
	events []Event
}

func newBench(t *testing.T) *bench { return newBenchWith(t, nil) }

// newBenchWith is a bench whose JobManager runs with more Flink configuration.
func newBenchWith(t *testing.T, config map[string]string) *bench {
	clk := testclock.NewFakeClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	conf := map[string]string{
		"state.savepoints.dir": "s3://b/savepoints", "state.checkpoints.dir": "s3://b/checkpoints",
		"taskmanager.numberOfTaskSlots": "2", "execution.checkpointing.interval": "10s",
		"execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
	}
	for k, v := range config {
		conf[k] = v
	}
	jm := flinksim.NewJobManager(flinksim.Options{Clock: clk, TaskManagers: 2, FlinkConfig: conf})
	srv := httptest.NewServer(jm.Handler())
	t.Cleanup(srv.Close)
	return &bench{t: t, clock: clk, jm: jm, api: client.New(client.DefaultConfig(), nil), url: srv.URL}
}

// pass is a new pass's view of the one cluster "c".
func (b *bench) pass() *Pass {
	p := NewPass(context.Background(), b.api, b.clock.Now(), Clusters{
		URL:            func(string) string { return b.url },
		JobManagerGone: func(string) bool { return b.gone },
	})
	p.Announce = func(e Event) { b.events = append(b.events, e) }
	return p
}

func (b *bench) step(d time.Duration) { b.clock.Step(d) }

func (b *bench) reasons() string {
	var out []string
	for _, e := range b.events {
		out = append(out, e.Reason)
	}
	return strings.Join(out, ",")
}

var limits = RunLimits{SubmitGracePeriod: 30 * time.Second, Stabilization: 2 * time.Second}

func app(uid string) Owner { return Owner{Name: "ns/wc", UID: uid} }

// run drives Run until the job runs stable, and returns the job's record.
func (b *bench) run(o Owner, job *Job, s Submission) {
	b.t.Helper()
	for i := 0; i < 50; i++ {
		step := b.pass().Run(o, job, s, limits)
		require.Empty(b.t, step.Failure)
		if step.Running {
			return
		}
		b.step(500 * time.Millisecond)
	}
	b.t.Fatalf("job %s never ran stable; events %s", job.ID, b.reasons())
}

func TestARunChoosesItsJobIDBeforeItSubmitsAnything(t *testing.T) {
	b := newBench(t)
	job := &Job{Cluster: "c"}
	step := b.pass().Run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2}, limits)
	require.NotNil(t, step.Wait)
	assert.True(t, step.Wait.Persist, "the id is persisted before the submission")
	assert.True(t, app("u1").Started(job.ID))
	assert.Empty(t, b.jm.Jobs(), "nothing is submitted in the pass that chose the id")

	b.run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2})
	jobs := b.jm.Jobs()
	require.Len(t, jobs, 1)
	assert.Equal(t, job.ID, jobs[0].ID, "submitted under the recorded id")
	assert.Contains(t, b.reasons(), "JobSubmitted")
}

func TestARunNeverSubmitsWhileTheJobsStateIsUnknown(t *testing.T) {
	b := newBench(t)
	job := &Job{Cluster: "c", ID: app("u1").NewJobID()}
	b.jm.SetFaults(flinksim.Faults{ErrorRate: map[string]float64{flinksim.AnyEndpoint: 1}})
	for i := 0; i < 5; i++ {
		step := b.pass().Run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2}, limits)
		require.NotNil(t, step.Wait)
		b.step(time.Second)
	}
	b.jm.SetFaults(flinksim.Faults{})
	assert.Empty(t, b.jm.Jobs(), "a JobManager that does not answer is no evidence that the job is gone")
}

func TestTheFenceAdoptsTheOwnersJobAndStopsForOthers(t *testing.T) {
	cases := []struct {
		name       string
		running    Owner
		owner      Owner
		wantAdopt  bool
		wantSubmit bool
		wantEvent  string
	}{
		{"the owner's own job", app("u1"), app("u1"), true, false, "JobAdopted"},
		{"another owner's job on the owner's cluster", Owner{Name: "ns/other", UID: "u9"}, app("u1"), false, false, ""},
		{"another owner's job on a shared cluster", Owner{Name: "ns/other", UID: "u9"}, Owner{Name: "ns/wc", UID: "u1", SharedCluster: true}, false, true, ""},
		{"a job left by an earlier object of the same name", app("u0"), Owner{Name: "ns/wc", UID: "u1", SharedCluster: true}, false, true, "PredecessorJobFound"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBench(t)
			other := &Job{Cluster: "c"}
			b.run(c.running, other, Submission{JarID: "wc.jar", Parallelism: 1})
			b.events = nil

			job := &Job{Cluster: "c", ID: c.owner.NewJobID()}
			step := b.pass().Run(c.owner, job, Submission{JarID: "wc.jar", Parallelism: 1}, limits)
			require.NotNil(t, step.Wait)
			assert.Equal(t, c.wantAdopt, job.ID == other.ID, "adopted")
			submitted := len(b.jm.Jobs()) == 2
			assert.Equal(t, c.wantSubmit, submitted, "submitted beside it")
			if !c.wantAdopt && !c.wantSubmit {
				assert.Error(t, step.Wait.Err, "the submission is blocked with a reason")
			}
			if c.wantEvent != "" {
				assert.Contains(t, b.reasons(), c.wantEvent)
			}
		})
	}
}

func TestAnOwnersJobIDsTellItFromAnEarlierObjectOfTheSameName(t *testing.T) {
	now, before := app("u1"), app("u0")
	id := before.NewJobID()
	assert.False(t, now.Started(id))
	assert.True(t, now.Predecessor(id))
	assert.True(t, now.Named(id))
	assert.False(t, Owner{Name: "ns/other", UID: "u1"}.Predecessor(id))
	// Job ids made before uids were read carry 12 characters of the name's hash: they count as an
	// earlier object's, and an owner without a uid makes them still.
	legacy := Owner{Name: "ns/wc"}.NewJobID()
	assert.True(t, now.Predecessor(legacy))
	assert.True(t, Owner{Name: "ns/wc"}.Started(legacy))
	assert.Len(t, now.NewJobID(), 32)
}

func TestASavepointIsRecordedBeforeItIsTriggeredAndFollowedToItsEnd(t *testing.T) {
	b := newBench(t)
	job := &Job{Cluster: "c"}
	b.run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2})
	ref := b.pass().Ref("c", job.ID)

	var trig Trigger
	step := b.pass().Savepoint(ref, &trig, false, true)
	require.NotNil(t, step.Wait)
	assert.True(t, step.Wait.Persist)
	assert.True(t, trig.Asked())
	assert.Equal(t, 0, b.jm.SavepointTriggers(), "nothing is triggered before the trigger id is persisted")

	var done SavepointStep
	for i := 0; i < 20 && done.Location == ""; i++ {
		done = b.pass().Savepoint(ref, &trig, false, true)
		require.Empty(t, done.Failure)
		b.step(500 * time.Millisecond)
	}
	require.NotEmpty(t, done.Location)
	assert.Equal(t, 1, b.jm.SavepointTriggers(), "one savepoint, however often it was polled")
}

// A manual checkpoint goes as a savepoint does: its trigger persisted first, then sent once and
// followed to the checkpoint's path; following only (mayTrigger false) never sends one.
func TestAManualCheckpointIsRecordedBeforeItIsTriggeredAndFollowedToItsPath(t *testing.T) {
	b := newBench(t)
	job := &Job{Cluster: "c"}
	b.run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2})
	ref := b.pass().Ref("c", job.ID)

	var none Trigger
	assert.NotEmpty(t, b.pass().Checkpoint(ref, &none, false).Failure, "following asks for nothing")
	var trig Trigger
	step := b.pass().Checkpoint(ref, &trig, true)
	require.NotNil(t, step.Wait)
	assert.True(t, step.Wait.Persist)
	assert.True(t, trig.Asked())
	var done CheckpointStep
	for i := 0; i < 20 && done.Location == ""; i++ {
		done = b.pass().Checkpoint(ref, &trig, true)
		require.Empty(t, done.Failure)
		b.step(500 * time.Millisecond)
	}
	assert.Contains(t, done.Location, "chk-")
	assert.Contains(t, b.reasons(), "CheckpointTriggered")
	assert.Equal(t, 1, strings.Count(b.reasons(), "CheckpointTriggered"), "sent once, however often it was polled")
}

func TestASavepointThatFlinkFailsClearsItsTriggerAndOneGivenUpOnKeepsIt(t *testing.T) {
	b := newBench(t)
	job := &Job{Cluster: "c"}
	b.run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2})
	ref := b.pass().Ref("c", job.ID)
	b.jm.SetFaults(flinksim.Faults{FailSavepoints: true})
	var trig Trigger
	var step SavepointStep
	for i := 0; i < 20 && step.Failure == ""; i++ {
		step = b.pass().Savepoint(ref, &trig, false, true)
		b.step(500 * time.Millisecond)
	}
	require.NotEmpty(t, step.Failure)
	assert.False(t, trig.Asked(), "Flink said it failed: a new attempt takes a new trigger")

	// A trigger Flink does not know, followed by a pass that may not trigger: the caller gives up,
	// and the trigger stays for a later pass to find its savepoint.
	b.jm.SetFaults(flinksim.Faults{})
	unknown := Trigger{ID: NewID(), Time: b.clock.Now()}
	p := b.pass()
	p.Overdue = true
	step = p.Savepoint(ref, &unknown, true, true)
	require.NotEmpty(t, step.Failure)
	assert.True(t, unknown.Asked(), "giving up keeps the trigger")
}

func TestACancelStopsAJobOnlyOnEvidence(t *testing.T) {
	b := newBench(t)
	job := &Job{Cluster: "c"}
	b.run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2})
	state, err := b.pass().Cancel(b.pass().View("c", job.ID))
	require.NoError(t, err)
	assert.Equal(t, Alive, state, "cancelling until Flink says CANCELED")
	for i := 0; i < 10 && state != Stopped; i++ {
		b.step(500 * time.Millisecond)
		state, _ = b.pass().Cancel(b.pass().View("c", job.ID))
	}
	assert.Equal(t, Stopped, state)

	b.jm.Crash()
	v := b.pass().View("c", job.ID)
	assert.NotEqual(t, Alive, v.Liveness)
	b.gone = true
	assert.Equal(t, Stopped, b.pass().View("c", "ffffffffffffffffffffffffffffffff").Liveness, "a JobManager gone with all its pods is evidence")
}

func TestTheRestoreChoiceTakesTheNewestStateWithinItsAge(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) time.Time { return now.Add(-ago) }
	policy := RestorePolicy{MaxAge: time.Hour}
	cases := []struct {
		name    string
		points  []StatePoint
		policy  RestorePolicy
		want    string
		problem bool
		empty   bool
	}{
		{"newest wins", []StatePoint{{"chk-1", at(time.Minute)}, {"sp-1", at(30 * time.Second)}}, policy, "sp-1", false, false},
		{"nothing known", nil, policy, "", true, false},
		{"too old", []StatePoint{{"chk-1", at(2 * time.Hour)}}, policy, "", true, false},
		{"too old, without state allowed", []StatePoint{{"chk-1", at(2 * time.Hour)}}, RestorePolicy{MaxAge: time.Hour, WithoutState: true}, "", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ChooseRestore(c.points, now, c.policy)
			assert.Equal(t, c.want, got.Path)
			assert.Equal(t, c.problem, got.Problem != "", got.Problem)
			assert.Equal(t, c.empty, got.WithoutState)
		})
	}
}

func TestASavepointFlinkRefusesFailsAtOnce(t *testing.T) {
	b := newBench(t)
	jm := flinksim.NewJobManager(flinksim.Options{Clock: b.clock, TaskManagers: 2, FlinkConfig: map[string]string{"taskmanager.numberOfTaskSlots": "2"}})
	srv := httptest.NewServer(jm.Handler())
	t.Cleanup(srv.Close)
	b.jm, b.url = jm, srv.URL
	job := &Job{Cluster: "c"}
	b.run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2})
	trig := Trigger{ID: NewID(), Time: b.clock.Now()}
	require.True(t, b.pass().Savepoint(b.pass().Ref("c", job.ID), &trig, false, true).Wait.Persist, "when it is sent is persisted first")
	step := b.pass().Savepoint(b.pass().Ref("c", job.ID), &trig, false, true)
	require.NotEmpty(t, step.Failure, "a cluster without a savepoint directory refuses: the same request is refused again")
	assert.Contains(t, step.Failure, "refused")
	assert.False(t, trig.Asked(), "nothing is in flight")
}

// A pass whose fence says the replica may not act sends nothing that changes Flink: no submission,
// no trigger, no cancel. Reads go on, so what Flink did is still seen.
func TestAFencedPassChangesNothingInFlink(t *testing.T) {
	b := newBench(t)
	job := &Job{Cluster: "c"}
	b.run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2})
	notLeading := func() error { return errors.New("the leader lease was last renewed 20s ago") }

	fresh := &Job{Cluster: "c", ID: app("u2").NewJobID()}
	p := b.pass()
	p.FenceWith(notLeading)
	step := p.Run(Owner{Name: "ns/other", UID: "u2", SharedCluster: true}, fresh, Submission{JarID: "wc.jar", Parallelism: 1}, limits)
	require.NotNil(t, step.Wait)
	assert.ErrorContains(t, step.Wait.Err, "lease")
	assert.Len(t, b.jm.Jobs(), 1, "nothing submitted")

	p = b.pass()
	p.FenceWith(notLeading)
	trig := Trigger{ID: NewID(), Time: b.clock.Now()}
	sp := p.Savepoint(p.Ref("c", job.ID), &trig, true, true)
	require.NotNil(t, sp.Wait)
	assert.Equal(t, 0, b.jm.SavepointTriggers(), "nothing triggered")

	p = b.pass()
	p.FenceWith(notLeading)
	state, err := p.Cancel(p.View("c", job.ID))
	assert.Equal(t, Unknown, state)
	assert.Error(t, err)
	assert.Equal(t, "RUNNING", b.jm.Jobs()[0].State, "nothing cancelled")
}

func TestFirstLinesKeepsTheExceptionAndItsDeepestCause(t *testing.T) {
	trace := "java.lang.RuntimeException: boom\n\tat a.b(C.java:1)\nCaused by: x.Y: middle\n\tat d\n  Caused by: java.io.IOException: disk full\n\tat e"
	assert.Equal(t, "java.lang.RuntimeException: boom (Caused by: java.io.IOException: disk full)", firstLines(trace))
	assert.Equal(t, "just one line", firstLines("just one line"))
	assert.Equal(t, "x (Caused by: z)", firstLines("x\nnot Caused by: y\nCaused by: z"))
	assert.Equal(t, "x (Caused by: a)", firstLines("x\nCaused by: a\nfoo Caused by: b"))
	huge := "E: huge" + strings.Repeat("\n", 2<<20)
	assert.Equal(t, "E: huge", firstLines(huge))
}

// Every savepoint a pass triggers is in the pass's format, with a cancel (End) as without one.
func TestEverySavepointIsTakenInThePassesFormat(t *testing.T) {
	b := newBench(t)
	job := &Job{Cluster: "c"}
	b.run(app("u1"), job, Submission{JarID: "wc.jar", Parallelism: 2})
	native := func() *Pass {
		p := b.pass()
		p.SavepointFormat = "NATIVE"
		return p
	}
	formats := func() []string {
		var out []string
		for _, s := range b.jm.Storage().Snapshots() {
			if s.Savepoint {
				out = append(out, s.Format)
			}
		}
		return out
	}

	savepoint := func(pass func() *Pass) {
		var trig Trigger
		for i := 0; i < 20; i++ {
			if step := pass().Savepoint(b.pass().Ref("c", job.ID), &trig, false, true); step.Location != "" {
				return
			}
			b.step(500 * time.Millisecond)
		}
		t.Fatalf("the savepoint never completed; events %s", b.reasons())
	}
	savepoint(b.pass)
	savepoint(native)
	end := Trigger{ID: NewID(), Time: b.clock.Now()}
	for i := 0; i < 20; i++ {
		p := native()
		if step := p.End(p.View("c", job.ID), &end, true, "Delete"); step.Wait == nil {
			require.NotEmpty(t, step.SavepointPath, step.Missing)
			break
		}
		b.step(500 * time.Millisecond)
	}
	assert.Equal(t, []string{"CANONICAL", "NATIVE", "NATIVE"}, formats(), "Flink's default, then the pass's, without a cancel and with one")
}
