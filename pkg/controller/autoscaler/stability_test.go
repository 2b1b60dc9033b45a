package autoscaler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeJob is a pipeline on a fake clock, driven by the autoscaler: a source that reads from a
// backlog the load fills, a map that emits two records for each it takes, and a sink. A subtask of
// each processes a fixed rate when busy all the time; the vertex that can take least, for what it
// must take, limits what the source reads, and the vertices before it are back-pressured. A rescale
// restarts the job for a minute, while the backlog grows; it runs stable the minute after.
type fakeJob struct {
	t        *testing.T
	cfg      Config
	now      time.Time
	vertices []Vertex
	capacity map[string]float64 // records a second a subtask processes, busy all the time
	fanOut   map[string]float64 // records in at the vertex for each record the source reads
	backlog  float64
	restart  time.Time // the end of the restart after the last rescale
	state    JobState
	history  History
	samples  []Sample
	changes  []fakeChange
}

type fakeChange struct {
	at       time.Time
	from, to map[string]int
}

func newFakeJob(t *testing.T, parallelism map[string]int) *fakeJob {
	j := &fakeJob{
		t: t, cfg: DefaultConfig(), now: t0,
		vertices: []Vertex{
			{ID: "src", Name: "Source", IsSource: true, Partitions: 32, MaxParallelism: 128},
			{ID: "map", Name: "Map", MaxParallelism: 128, Upstream: []string{"src"}},
			{ID: "sink", Name: "Sink", MaxParallelism: 128, Upstream: []string{"map"}},
		},
		capacity: map[string]float64{"src": 1000, "map": 400, "sink": 800},
		fanOut:   map[string]float64{"src": 1, "map": 1, "sink": 2},
	}
	for i := range j.vertices {
		j.vertices[i].Parallelism = parallelism[j.vertices[i].ID]
	}
	j.state = JobState{FreshState: true, LastRescale: t0.Add(-time.Hour), Stable: StableRun{At: t0.Add(-time.Hour), Parallelism: j.parallelism()}}
	return j
}

func (j *fakeJob) parallelism() map[string]int {
	p := map[string]int{}
	for _, v := range j.vertices {
		p[v.ID] = v.Parallelism
	}
	return p
}

// run drives the job for d at the load (records a second arriving at the source): a sample every
// 15 seconds, an evaluation every minute.
func (j *fakeJob) run(d time.Duration, load func(time.Time) float64) {
	for end := j.now.Add(d); j.now.Before(end); j.now = j.now.Add(15 * time.Second) {
		j.tick(load(j.now), 15)
		if j.now.Sub(t0)%time.Minute == 0 {
			j.evaluate()
		}
	}
}

func (j *fakeJob) tick(load, dt float64) {
	if j.now.Before(j.restart) {
		j.state.Restarting = true
		j.backlog += load * dt
		return
	}
	j.state.Restarting = false
	if j.state.Stable.At.Before(j.state.LastRescale) && !j.now.Before(j.restart.Add(time.Minute)) {
		j.state.Stable = StableRun{At: j.now, Parallelism: j.parallelism()}
	}
	most, bottleneck := math.Inf(1), 0
	for i, v := range j.vertices {
		if c := j.capacity[v.ID] * float64(v.Parallelism) / j.fanOut[v.ID]; c < most {
			most, bottleneck = c, i
		}
	}
	read := math.Min(most, load+j.backlog/dt)
	j.backlog = math.Max(0, j.backlog+(load-read)*dt)
	s := Sample{Time: j.now, Vertices: map[string]VertexSample{}}
	for i, v := range j.vertices {
		in := read * j.fanOut[v.ID]
		m := VertexSample{NumRecordsInPerSecond: in, BusyTimeMsPerSecond: 1000 * in / (j.capacity[v.ID] * float64(v.Parallelism))}
		if i+1 < len(j.vertices) {
			m.NumRecordsOutPerSecond = read * j.fanOut[j.vertices[i+1].ID]
		}
		if read == most && i < bottleneck {
			m.BackPressuredTimeMsPerSecond = 1000 - m.BusyTimeMsPerSecond
		}
		if v.IsSource {
			m.PendingRecords, m.PendingKnown = j.backlog, true
		}
		s.Vertices[v.ID] = m
	}
	j.samples = append(j.samples, s)
	if len(j.samples) > 200 {
		j.samples = j.samples[len(j.samples)-200:]
	}
}

func (j *fakeJob) evaluate() {
	d := Evaluate(j.now, j.cfg, j.vertices, j.samples, j.state, j.history)
	j.history = d.History
	if !d.Apply {
		return
	}
	from := j.parallelism()
	for i := range j.vertices {
		j.vertices[i].Parallelism = d.Parallelism[j.vertices[i].ID]
	}
	j.changes = append(j.changes, fakeChange{at: j.now, from: from, to: j.parallelism()})
	j.state.LastRescale, j.restart = j.now, j.now.Add(time.Minute)
	j.t.Logf("%s %s", j.now.Sub(t0), d.Reason)
}

// noisy is a load of level, off by up to 10% either way, a new random deviation every ten
// minutes: each window sees it at a different level, not only its mean.
func noisy(seed uint64, level func(time.Time) float64) func(time.Time) float64 {
	rng := rand.New(rand.NewPCG(seed, seed))
	dev, next := 1.0, t0
	return func(t time.Time) float64 {
		if !t.Before(next) {
			dev, next = 0.9+0.2*rng.Float64(), next.Add(10*time.Minute)
		}
		return level(t) * dev
	}
}

func constant(x float64) func(time.Time) float64 { return func(time.Time) float64 { return x } }

// A load of 1120/s needs exactly 4 subtasks of the map at 0.7, and 10% more needs 5: without the
// tolerance band the map would go to 5 whenever a window runs over, and back later.
func TestASteadyLoadBetweenTwoParallelismsDoesNotFlipBackAndForth(t *testing.T) {
	for seed := range uint64(5) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			j := newFakeJob(t, map[string]int{"src": 2, "map": 4, "sink": 4})
			j.run(24*time.Hour, noisy(seed, constant(1120)))
			assert.Empty(t, j.changes)
		})
	}
}

// From too few subtasks the job scales up, works its backlog off, scales down what it no longer
// needs, and stays: no vertex goes up again after going down.
func TestAnUnderscaledJobSettlesWithoutOscillating(t *testing.T) {
	for seed := range uint64(5) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			j := newFakeJob(t, map[string]int{"src": 1, "map": 1, "sink": 1})
			j.run(24*time.Hour, noisy(seed, constant(1120)))
			require.NotEmpty(t, j.changes)
			j.neverUpAfterDown()
			assert.LessOrEqual(t, len(j.changes), 4)
			assert.Less(t, j.backlog, 1120.0*60, "its backlog is worked off")
		})
	}
}

func TestALoadStepScalesUpAtOnceAndDownAfterTheDelay(t *testing.T) {
	up, down := t0.Add(2*time.Hour), t0.Add(5*time.Hour)
	level := func(t time.Time) float64 {
		if !t.Before(up) && t.Before(down) {
			return 1300
		}
		return 300
	}
	start := map[string]int{"src": 1, "map": 2, "sink": 2} // enough for 300/s
	for seed := range uint64(5) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			j := newFakeJob(t, start)
			j.run(10*time.Hour, noisy(seed, level))
			require.NotEmpty(t, j.changes)
			first := j.changes[0]
			assert.False(t, first.at.Before(up), "nothing changes before the step")
			assert.Less(t, first.at.Sub(up), 10*time.Minute, "the first scale-up comes within minutes of the step")
			assert.GreaterOrEqual(t, j.capacityAt(up.Add(30*time.Minute)), 1.1*1300, "within half an hour it takes the load")

			// Scale-downs that correct the scale-up's overshoot (it works a backlog off) may
			// come at any time; what the high load needs stays until the delay has passed since
			// the load fell.
			for at := up.Add(30 * time.Minute); at.Before(down.Add(j.cfg.ScaleDownDelay)); at = at.Add(time.Minute) {
				require.GreaterOrEqual(t, j.capacityAt(at), 1300.0, "at %s", at.Sub(t0))
			}
			assert.Equal(t, start, j.parallelism(), "back where it started, five hours after the load fell")
			j.neverUpAfterDown()
		})
	}
}

// After the load falls back, the job is back at what the low load asks for within the scale-down
// delay and two rescales' time (stabilization and window each; the most one decision divides a
// vertex by is 2, and this one needs 3): the delay starts when the load falls, for every vertex at
// once, and a rescale does not start it over. (TestALoadStepScalesUpAtOnceAndDownAfterTheDelay
// checks that what the high load needs stays until the delay has passed.)
func TestAfterTheLoadFallsTheJobIsBackWithinTheDelay(t *testing.T) {
	up, down := t0.Add(2*time.Hour), t0.Add(5*time.Hour)
	level := func(t time.Time) float64 {
		if !t.Before(up) && t.Before(down) {
			return 1300
		}
		return 300
	}
	start := map[string]int{"src": 1, "map": 2, "sink": 2}
	for seed := range uint64(5) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			j := newFakeJob(t, start)
			cycle := j.cfg.StabilizationInterval + j.cfg.MetricsWindow
			j.run(down.Sub(t0)+j.cfg.ScaleDownDelay+2*cycle+2*time.Minute, noisy(seed, level))
			assert.Equal(t, start, j.parallelism())
			j.neverUpAfterDown()
		})
	}
}

// A dip of the load shorter than the scale-down delay scales nothing down, however deep.
func TestADipShorterThanTheDelayScalesNothingDown(t *testing.T) {
	from, to := t0.Add(3*time.Hour), t0.Add(3*time.Hour+55*time.Minute)
	level := func(t time.Time) float64 {
		if !t.Before(from) && t.Before(to) {
			return 200
		}
		return 1120
	}
	for seed := range uint64(5) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			j := newFakeJob(t, map[string]int{"src": 2, "map": 4, "sink": 4})
			j.run(8*time.Hour, noisy(seed, level))
			assert.Empty(t, j.changes)
		})
	}
}

// neverUpAfterDown fails the test when a vertex went up after it went down.
func (j *fakeJob) neverUpAfterDown() {
	for _, v := range j.vertices {
		var wentDown time.Time
		for _, c := range j.changes {
			switch {
			case c.to[v.ID] < c.from[v.ID] && wentDown.IsZero():
				wentDown = c.at
			case c.to[v.ID] > c.from[v.ID] && !wentDown.IsZero():
				j.t.Errorf("%s went down at %s and up again at %s", v.ID, wentDown.Sub(t0), c.at.Sub(t0))
			}
		}
	}
}

// capacityAt is the most the source could read at the parallelism in force at t.
func (j *fakeJob) capacityAt(t time.Time) float64 {
	p := j.changes[0].from
	for _, c := range j.changes {
		if !c.at.After(t) {
			p = c.to
		}
	}
	most := math.Inf(1)
	for id, n := range p {
		most = math.Min(most, j.capacity[id]*float64(n)/j.fanOut[id])
	}
	return most
}
