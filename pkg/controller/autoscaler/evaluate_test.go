package autoscaler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each rule holds back a scale-up that the job, overloaded, is due.
func TestNothingIsDecidedWhileARuleSaysSo(t *testing.T) {
	without := func(s []Sample, from, to time.Time) []Sample {
		var out []Sample
		for _, x := range s {
			if x.Time.Before(from) || x.Time.After(to) {
				out = append(out, x)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		change func(cfg *Config, vs *[]Vertex, samples *[]Sample, state *JobState, h *History)
		apply  bool
		reason string
	}{
		{"nothing holds it back", func(*Config, *[]Vertex, *[]Sample, *JobState, *History) {}, true, "rescale Source 2→3"},
		{"the job failed", func(_ *Config, _ *[]Vertex, _ *[]Sample, s *JobState, _ *History) { s.Failed = true },
			false, "the job failed"},
		{"the job restarts", func(_ *Config, _ *[]Vertex, _ *[]Sample, s *JobState, _ *History) { s.Restarting = true },
			false, "the job is restarting"},
		{"its checkpoints fail", func(_ *Config, _ *[]Vertex, _ *[]Sample, s *JobState, _ *History) { s.CheckpointsFailing = true },
			false, "checkpoints are failing"},
		{"the cool-down after a way back", func(_ *Config, _ *[]Vertex, _ *[]Sample, _ *JobState, h *History) {
			h.HoldUntil = now.Add(time.Second)
		}, false, "cooling down until"},
		{"the cool-down is over", func(_ *Config, _ *[]Vertex, _ *[]Sample, _ *JobState, h *History) { h.HoldUntil = now },
			true, "rescale"},
		{"the job has not run stable since its change", func(_ *Config, _ *[]Vertex, _ *[]Sample, s *JobState, _ *History) {
			s.Stable.At = t0.Add(-time.Minute)
		}, false, "has not run stable since"},
		{"the history knows of a stable run the state does not", func(_ *Config, _ *[]Vertex, _ *[]Sample, s *JobState, h *History) {
			h.Stable, s.Stable = s.Stable, StableRun{}
		}, true, "rescale"},
		{"the stabilization interval", func(_ *Config, _ *[]Vertex, _ *[]Sample, s *JobState, _ *History) {
			s.LastRescale, s.Stable.At = now.Add(-4*time.Minute), now.Add(-3*time.Minute)
		}, false, "stabilizing until"},
		{"a window not yet full after the stabilization interval", func(_ *Config, _ *[]Vertex, _ *[]Sample, s *JobState, _ *History) {
			s.LastRescale, s.Stable.At = now.Add(-14*time.Minute), now.Add(-13*time.Minute)
		}, false, "the metrics window is not full"},
		{"no metrics", func(_ *Config, _ *[]Vertex, samples *[]Sample, _ *JobState, _ *History) { *samples = nil },
			false, "no metrics since"},
		{"a gap in the window", func(_ *Config, _ *[]Vertex, samples *[]Sample, _ *JobState, _ *History) {
			*samples = without(*samples, now.Add(-7*time.Minute), now.Add(-4*time.Minute))
		}, false, "no sample from"},
		{"stale metrics", func(_ *Config, _ *[]Vertex, samples *[]Sample, _ *JobState, _ *History) {
			*samples = without(*samples, now.Add(-2*time.Minute-time.Second), now)
		}, false, "no sample from"},
		{"a short gap is no gap", func(_ *Config, _ *[]Vertex, samples *[]Sample, _ *JobState, _ *History) {
			*samples = without(*samples, now.Add(-6*time.Minute-30*time.Second), now.Add(-5*time.Minute-30*time.Second))
		}, true, "rescale"},
		{"a vertex without metrics", func(_ *Config, vs *[]Vertex, _ *[]Sample, _ *JobState, _ *History) {
			*vs = append(*vs, Vertex{ID: "sink", Name: "Sink", Parallelism: 1, Upstream: []string{"src"}})
		}, false, "no metrics of vertex Sink"},
		{"a rescale restarts the job and there is no fresh state", func(_ *Config, _ *[]Vertex, _ *[]Sample, s *JobState, _ *History) {
			s.FreshState = false
		}, false, "no fresh state"},
		{"Flink rescales in place without fresh state", func(_ *Config, _ *[]Vertex, _ *[]Sample, s *JobState, _ *History) {
			s.FreshState, s.InPlaceRescale = false, true
		}, true, "rescale"},
		{"an invalid configuration", func(c *Config, _ *[]Vertex, _ *[]Sample, _ *JobState, _ *History) { c.MetricsWindow = 0 },
			false, "metricsWindow"},
		{"a cycle in the graph", func(_ *Config, vs *[]Vertex, _ *[]Sample, _ *JobState, _ *History) {
			(*vs)[0].Upstream = []string{"src"}
		}, false, "cycle through Source"},
		{"no vertices", func(_ *Config, vs *[]Vertex, _ *[]Sample, _ *JobState, _ *History) { *vs = nil },
			false, "no vertices"},
		{"an upstream vertex not in the graph", func(_ *Config, vs *[]Vertex, _ *[]Sample, _ *JobState, _ *History) {
			(*vs)[0].Upstream = []string{"gone"}
		}, false, "upstream vertex gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			vs, samples, state := overloaded()
			var h History
			tc.change(&cfg, &vs, &samples, &state, &h)
			d := Evaluate(now, cfg, vs, samples, state, h)
			assert.Equal(t, tc.apply, d.Apply, d.Reason)
			assert.Contains(t, d.Reason, tc.reason)
			if tc.apply {
				assert.Equal(t, 3, d.Parallelism["src"])
				require.Len(t, d.History.Changes, 1)
				assert.Equal(t, Scaled, d.History.Changes[0].Kind)
			} else {
				assert.Empty(t, d.History.Changes, "a decision held back is not history")
			}
		})
	}
}

// evaluations runs Evaluate every `every` from `from` to `to`, each handed the history the one
// before returned; the metrics are what at says, sampled every 30 seconds.
func evaluations(cfg Config, vs []Vertex, at func(time.Time) map[string]VertexSample, from, to, every time.Duration) []Decision {
	samples := series(now.Add(-20*time.Minute), now.Add(to), 30*time.Second, at)
	state := settled(map[string]int{vs[0].ID: vs[0].Parallelism})
	var out []Decision
	var h History
	for t := from; t <= to; t += every {
		d := Evaluate(now.Add(t), cfg, vs, samples, state, h)
		out = append(out, d)
		h = d.History
	}
	return out
}

func TestAScaleDownWaitsUntilEveryEvaluationOverTheDelayRecommendedIt(t *testing.T) {
	vs := []Vertex{{ID: "map", Name: "Map", Parallelism: 8, MaxParallelism: 128}}
	// 8 subtasks of 1000/s each busy b of the time: at 0.2 it needs 3 (at most ÷2: 4), at 0.4 it
	// needs 5, at 0.75 it keeps 8.
	at := func(b float64) VertexSample { return running(8000*b, 1000*b) }
	for _, tc := range []struct {
		name    string
		busy    func(t time.Duration) float64
		applyAt time.Duration
		to      int
	}{
		{"a steady low load", func(time.Duration) float64 { return 0.2 }, time.Hour, 4},
		{"to the highest recommendation over the delay", func(t time.Duration) float64 {
			if t > 20*time.Minute && t <= 30*time.Minute {
				return 0.4
			}
			return 0.2
		}, time.Hour, 5},
		// The windows at 25 and 30 minutes read the full load from its start and are in the
		// tolerance band; the one at 35 reads the low load from its return, and recommends 3, at
		// most ÷2: 4. The recommendation at 30 holds until the next evaluation, at 35.
		{"a window at the full load starts the delay over", func(t time.Duration) float64 {
			if t > 20*time.Minute && t <= 30*time.Minute {
				return 0.75
			}
			return 0.2
		}, 35*time.Minute + time.Hour, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := evaluations(DefaultConfig(), vs, func(x time.Time) map[string]VertexSample {
				return map[string]VertexSample{"map": at(tc.busy(x.Sub(now)))}
			}, 0, 2*time.Hour, 5*time.Minute)
			for i, d := range ds {
				at := time.Duration(i) * 5 * time.Minute
				if at < tc.applyAt {
					require.False(t, d.Apply, "at %s: %s", at, d.Reason)
					continue
				}
				require.True(t, d.Apply, "at %s: %s", at, d.Reason)
				assert.Equal(t, tc.to, d.Parallelism["map"], d.Reason)
				assert.Contains(t, d.History.Load, "map", "the record of the load outlives the rescale")
				return
			}
			t.Fatal("never scaled down")
		})
	}
}

// A check that cannot evaluate adds nothing to the record of the load and forgets nothing:
// a stretch without evaluations as long as a rescale takes (applying it, the stabilization interval
// and a new window) keeps it; a longer one starts it, and the scale-down delay, over, since the load
// in between was not seen. (Before, any check that could not evaluate started the delay over, and
// so did every rescale, of any vertex.)
func TestOnlyALongStretchWithoutEvaluationsStartsTheScaleDownDelayOver(t *testing.T) {
	vs := []Vertex{{ID: "map", Parallelism: 8}}
	samples := steady(map[string]VertexSample{"map": running(1600, 200)}) // needs 3, at most ÷2: 4
	cfg := DefaultConfig()
	for _, tc := range []struct {
		name  string
		quiet time.Duration
		apply bool
	}{
		{"as long as a rescale takes", cfg.StabilizationInterval + cfg.MetricsWindow + cfg.ReadinessTimeout, true},
		{"longer", cfg.StabilizationInterval + cfg.MetricsWindow + cfg.ReadinessTimeout + time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := History{Load: map[string]LoadRecord{"map": {Since: now.Add(-2 * time.Hour), Peaks: []Peak{{Until: now.Add(-tc.quiet), Busy: 1.6}}}}}
			state := settled(map[string]int{"map": 8})
			state.CheckpointsFailing = true
			d := Evaluate(now, cfg, vs, samples, state, h)
			require.False(t, d.Apply)
			assert.Equal(t, h.Load, d.History.Load)

			state.CheckpointsFailing = false
			d = Evaluate(now, cfg, vs, samples, state, d.History)
			assert.Equal(t, tc.apply, d.Apply, d.Reason)
			if !tc.apply {
				assert.Equal(t, now, d.History.Load["map"].Since)
				assert.Equal(t, now.Add(-tc.quiet), h.Load["map"].Peaks[0].Until, "the caller's history is its own")
			}
		})
	}
}

func TestNoiseOfTenPercentDoesNotRescale(t *testing.T) {
	// 4 subtasks of 100/s each at 0.7: a window 10% over would need 5 at the target utilization.
	vs := []Vertex{{ID: "map", Parallelism: 4, MaxParallelism: 128}}
	at := func(load float64) VertexSample { return running(load, load/400*1000) }
	from := now.Add(-20 * time.Minute)
	for _, tc := range []struct {
		name    string
		samples []Sample
	}{
		{"a window 10% under", steady(map[string]VertexSample{"map": at(252)})},
		{"a window 10% over", steady(map[string]VertexSample{"map": at(308)})},
		{"10% either way from sample to sample", series(from, now, 30*time.Second, func(t time.Time) map[string]VertexSample {
			return map[string]VertexSample{"map": at(280 * (1 + 0.1*float64(int(t.Sub(from).Seconds()/30)%3-1)))}
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Evaluate(now, DefaultConfig(), vs, tc.samples, settled(map[string]int{"map": 4}), History{})
			assert.False(t, d.Apply, d.Reason)
			assert.Equal(t, 4, d.Parallelism["map"])
			assert.Equal(t, "every vertex keeps its parallelism", d.Reason)
		})
	}
}

func TestRecommendOnlyReportsWithoutApplying(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RecommendOnly = true
	vs, samples, state := overloaded()
	d := Evaluate(now, cfg, vs, samples, state, History{})
	assert.False(t, d.Apply)
	assert.Contains(t, d.Reason, "recommend-only: would rescale Source 2→3")
	assert.Equal(t, 3, d.Parallelism["src"], "what would run")
	vd := d.Vertices[0]
	assert.Equal(t, VertexDecision{ID: "src", Name: "Source", Current: 2, Recommended: 3, Reason: vd.Reason, Rates: vd.Rates}, vd)
	assert.InDelta(t, 2000/(2*0.95), vd.Rates.ProcessingRate, 0.01)
	assert.InDelta(t, 2000, vd.Rates.Target, 0.01)
	assert.InDelta(t, 0.95, vd.Rates.Utilization, 0.001)
	assert.Contains(t, vd.Reason, "utilization 0.95 is outside 0.60–0.80; 3 subtasks take the target at 0.70 or less")
	require.Len(t, d.History.Changes, 1)
	assert.Equal(t, Change{Time: now, Kind: Recommended, Vertices: []VertexChange{{ID: "src", From: 2, To: 3}}, Reason: d.History.Changes[0].Reason},
		d.History.Changes[0])

	again := Evaluate(now.Add(time.Minute), cfg, vs, samples, state, d.History)
	assert.Len(t, again.History.Changes, 1, "a recommendation repeated is recorded once")

	vs[0].Parallelism = 1
	other := Evaluate(now.Add(2*time.Minute), cfg, vs, samples, state, again.History)
	assert.Len(t, other.History.Changes, 2, "another recommendation is recorded")
}
