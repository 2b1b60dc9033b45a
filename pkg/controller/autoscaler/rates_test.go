package autoscaler

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// alternating is the last 20 minutes of samples, every 30 seconds, showing a and b in turn.
func alternating(id string, a, b VertexSample) []Sample {
	from := now.Add(-20 * time.Minute)
	return series(from, now, 30*time.Second, func(t time.Time) map[string]VertexSample {
		if int(t.Sub(from)/(30*time.Second))%2 == 0 {
			return map[string]VertexSample{id: a}
		}
		return map[string]VertexSample{id: b}
	})
}

func TestTheTrueProcessingRateIgnoresSamplesTooIdleToMeasureIt(t *testing.T) {
	v := []Vertex{{ID: "map", Parallelism: 2, MaxParallelism: 128}}
	for _, tc := range []struct {
		name    string
		samples []Sample
		rate    float64
		bound   bool
	}{
		{"busy samples measure it", steady(map[string]VertexSample{"map": running(1000, 500)}), 1000, false},
		{"a sample busy 1% of the time does not count", alternating("map", running(1000, 500), running(200, 10)), 1000, false},
		{"a sample without busy time does not count", alternating("map", running(1000, 500), running(5000, math.NaN())), 1000, false},
		// The window holds 11 samples of the first kind and 10 of the second; a mean of the
		// samples' rates would be 900.
		{"each sample counts as much as the time it measured", alternating("map", running(1000, 500), running(400, 250)),
			(11*1000 + 10*400) / (2 * (11*0.5 + 10*0.25)), false},
		{"a vertex never busy enough is at least as fast as 5% busy shows", steady(map[string]VertexSample{"map": running(100, 10)}), 1000, true},
		{"a vertex that took in nothing has no known rate", steady(map[string]VertexSample{"map": running(0, 0)}), 0, false},
		{"a vertex that reports no busy time has no known rate", steady(map[string]VertexSample{"map": running(1000, math.NaN())}), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Evaluate(now, DefaultConfig(), v, tc.samples, settled(map[string]int{"map": 2}), History{})
			require.Len(t, d.Vertices, 1, d.Reason)
			r := d.Vertices[0].Rates
			assert.InDelta(t, tc.rate, r.ProcessingRate, 0.01, d.Reason)
			assert.Equal(t, tc.bound, r.ProcessingRateIsBound)
		})
	}
}

func TestASourceWorksOffItsBacklogWithinTheCatchUpDuration(t *testing.T) {
	cfg := DefaultConfig() // a 15-minute catch-up
	src := []Vertex{{ID: "src", Parallelism: 2, IsSource: true}}
	from := now.Add(-20 * time.Minute)
	backlog := func(at0, perSecond float64) []Sample {
		return series(from, now, 30*time.Second, func(t time.Time) map[string]VertexSample {
			m := running(1000, 500) // 1000/s per subtask when busy
			m.PendingRecords, m.PendingKnown = at0+perSecond*t.Sub(from).Seconds(), true
			return map[string]VertexSample{"src": m}
		})
	}
	for _, tc := range []struct {
		name     string
		samples  []Sample
		arrival  float64
		backlog  float64
		parallel int
	}{
		{"no backlog reported: it takes what it reads", steady(map[string]VertexSample{"src": running(1000, 500)}), 1000, 0, 2},
		{"a steady backlog", backlog(900_000, 0), 1000, 900_000, 3},
		{"a growing backlog: more arrives than it reads", backlog(900_000, 100), 1100, 900_000 + 100*1200, 4},
		{"a shrinking backlog: less arrives than it reads", backlog(900_000, -200), 800, 900_000 - 200*1200, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Evaluate(now, cfg, src, tc.samples, settled(map[string]int{"src": 2}), History{})
			require.Len(t, d.Vertices, 1)
			vd := d.Vertices[0]
			r := vd.Rates
			assert.InDelta(t, tc.arrival, r.Arrival, 0.5, d.Reason)
			assert.InDelta(t, tc.backlog, r.Backlog, 0.5)
			assert.InDelta(t, tc.arrival+tc.backlog/cfg.CatchUpDuration.Seconds(), r.Target, 0.5)
			assert.Equal(t, tc.parallel, vd.Recommended, vd.Reason)
			// What the subtasks take beyond the arrival works the backlog off within the catch-up
			// duration: at the target utilization when they are changed (and one fewer would
			// not), at the top of the tolerance band when they are kept.
			spare := func(p int, u float64) float64 {
				return (float64(p)*r.ProcessingRate*u - r.Arrival) * cfg.CatchUpDuration.Seconds()
			}
			if vd.Recommended != vd.Current {
				assert.GreaterOrEqual(t, spare(vd.Recommended, cfg.TargetUtilization), r.Backlog)
				assert.Less(t, spare(vd.Recommended-1, cfg.TargetUtilization), r.Backlog)
			} else {
				assert.GreaterOrEqual(t, spare(vd.Recommended, cfg.TargetUtilization+cfg.UtilizationTolerance), r.Backlog)
			}
		})
	}
}

func TestTargetRatesPropagateThroughOutputRatios(t *testing.T) {
	for _, tc := range []struct {
		name     string
		vertices []Vertex
		metrics  map[string]VertexSample
		targets  map[string]float64
		parallel map[string]int
	}{{
		// The source must take twice what it reads (its backlog over the catch-up duration); the
		// flat map emits three records for each it takes, so the sink must take three times the
		// flat map's target.
		name: "a chain through a flat map",
		vertices: []Vertex{
			{ID: "src", Parallelism: 2, IsSource: true},
			{ID: "flatmap", Parallelism: 2, Upstream: []string{"src"}},
			{ID: "sink", Parallelism: 3, Upstream: []string{"flatmap"}},
		},
		metrics: map[string]VertexSample{
			"src":     {NumRecordsInPerSecond: 500, NumRecordsOutPerSecond: 500, BusyTimeMsPerSecond: 250, PendingRecords: 450_000, PendingKnown: true},
			"flatmap": {NumRecordsInPerSecond: 500, NumRecordsOutPerSecond: 1500, BusyTimeMsPerSecond: 500},
			"sink":    {NumRecordsInPerSecond: 1500, BusyTimeMsPerSecond: 500},
		},
		targets:  map[string]float64{"src": 1000, "flatmap": 1000, "sink": 3000},
		parallel: map[string]int{"src": 2, "flatmap": 3, "sink": 5},
	}, {
		// Only one of the join's inputs must grow: the join's target grows by that input's share.
		name: "a join of two sources",
		vertices: []Vertex{
			{ID: "a", Parallelism: 2, IsSource: true},
			{ID: "b", Parallelism: 2, IsSource: true},
			{ID: "join", Parallelism: 2, Upstream: []string{"a", "b"}},
		},
		metrics: map[string]VertexSample{
			"a":    {NumRecordsInPerSecond: 500, NumRecordsOutPerSecond: 500, BusyTimeMsPerSecond: 250, PendingRecords: 450_000, PendingKnown: true},
			"b":    {NumRecordsInPerSecond: 500, NumRecordsOutPerSecond: 250, BusyTimeMsPerSecond: 250},
			"join": {NumRecordsInPerSecond: 750, BusyTimeMsPerSecond: 500},
		},
		targets:  map[string]float64{"a": 1000, "b": 500, "join": 1250},
		parallel: map[string]int{"a": 2, "b": 1, "join": 3},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p := map[string]int{}
			for _, v := range tc.vertices {
				p[v.ID] = v.Parallelism
			}
			d := Evaluate(now, DefaultConfig(), tc.vertices, steady(tc.metrics), settled(p), History{})
			require.Len(t, d.Vertices, len(tc.vertices), d.Reason)
			for _, vd := range d.Vertices {
				assert.InDelta(t, tc.targets[vd.ID], vd.Rates.Target, 0.01, vd.ID)
				assert.Equal(t, tc.parallel[vd.ID], vd.Recommended, "%s: %s", vd.ID, vd.Reason)
			}
		})
	}
}
