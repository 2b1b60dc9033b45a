package autoscaler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A source of 4 subtasks that each take 1000 records a second reads 3000/s, 75% busy, until the
// records arriving step up to 8000/s: it then reads all it can, 4000/s, and its backlog grows by
// 4000/s. What the new load asks for is 8000/s plus the backlog over the catch-up duration.
func TestAStepUpIsAnsweredFromTheSamplesSinceIt(t *testing.T) {
	vs := []Vertex{{ID: "src", Name: "Source", Parallelism: 4, IsSource: true}}
	step := now.Add(-20 * time.Minute)
	at := func(x time.Time) map[string]VertexSample {
		m := running(3000, 750)
		m.PendingKnown = true
		if x.After(step) {
			m = running(4000, 1000)
			m.PendingRecords, m.PendingKnown = 4000*x.Sub(step).Seconds(), true
		}
		return map[string]VertexSample{"src": m}
	}
	samples := series(now.Add(-40*time.Minute), now, 30*time.Second, at)
	state := settled(map[string]int{"src": 4})
	cfg := DefaultConfig()

	// One sample after the step, the window's mean is mostly of the load before it: it would
	// rescale to 5.
	d := Evaluate(step.Add(30*time.Second), cfg, vs, samples, state, History{})
	assert.False(t, d.Apply, d.Reason)
	assert.Contains(t, d.Reason, "the load changed after 2026-11-01T13:40:00Z")
	assert.Equal(t, 4, d.Parallelism["src"])

	// Two minutes of samples after it are enough to decide on.
	for _, after := range []time.Duration{time.Minute, 90 * time.Second} {
		d = Evaluate(step.Add(after), cfg, vs, samples, state, History{})
		assert.False(t, d.Apply, "%s after the step: %s", after, d.Reason)
	}
	decided := step.Add(2*time.Minute + 30*time.Second)
	d = Evaluate(decided, cfg, vs, samples, state, History{})
	require.True(t, d.Apply, d.Reason)
	backlog := 4000 * decided.Sub(step).Seconds()
	want := int(8000/700.0 + backlog/cfg.CatchUpDuration.Seconds()/700 + 1) // 13
	assert.Equal(t, want, d.Parallelism["src"], d.Reason)
	assert.InDelta(t, 8000, d.Vertices[0].Rates.Arrival, 1, "the backlog's growth since the step")
}

// Noise within the tolerance and a slow drift are no change of regime: the decision reads the
// whole window.
func TestNoiseAndDriftAreNoChangeOfTheLoad(t *testing.T) {
	from := now.Add(-10 * time.Minute)
	for _, tc := range []struct {
		name string
		busy func(i int) float64
	}{
		{"±5% noise at 60% busy", func(i int) float64 { return 0.6 * (1 + 0.05*float64(i%3-1)) }},
		{"a drift of 8% over the window", func(i int) float64 { return 0.6 + 0.004*float64(i) }},
		{"one stray sample", func(i int) float64 {
			if i == 10 {
				return 0.95
			}
			return 0.7
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var samples []Sample
			for i := range 21 {
				samples = append(samples, Sample{Time: from.Add(time.Duration(i) * 30 * time.Second),
					Vertices: map[string]VertexSample{"map": running(1000*tc.busy(i), 1000*tc.busy(i))}})
			}
			w := window{from: from, to: now, samples: samples}
			assert.True(t, latestRegime([]Vertex{{ID: "map"}}, w, DefaultConfig().UtilizationTolerance).since.IsZero())
		})
	}
}

// Of two changes in the window, the decision reads the samples since the later.
func TestTheLatestChangeOfTheLoadCounts(t *testing.T) {
	from := now.Add(-10 * time.Minute)
	var samples []Sample
	for i := range 21 {
		b := 0.3
		switch {
		case i >= 16:
			b = 0.5
		case i >= 6:
			b = 0.9
		}
		samples = append(samples, Sample{Time: from.Add(time.Duration(i) * 30 * time.Second),
			Vertices: map[string]VertexSample{"map": running(1000*b, 1000*b)}})
	}
	r := latestRegime([]Vertex{{ID: "map", Name: "Map"}}, window{from: from, to: now, samples: samples}, 0.1)
	assert.Equal(t, samples[15].Time, r.since)
	assert.Equal(t, 5, r.samples)
	assert.InDelta(t, 0.9, r.before, 1e-9)
	assert.InDelta(t, 0.5, r.after, 1e-9)
}
