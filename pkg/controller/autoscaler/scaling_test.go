package autoscaler

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sources runs a job of sources that share nothing, each subtask taking 1000 records a second,
// with a sample and an evaluation every 30 seconds from now for d, and applies each decision at
// once. load is each vertex's load in busy subtasks (its records a second over 1000) at an offset
// from now. It returns the decisions that rescaled, by their offset.
func sources(cfg Config, p map[string]int, load func(id string, at time.Duration) float64, d time.Duration) map[time.Duration]map[string]int {
	var vs []Vertex
	for _, id := range []string{"a", "b", "c"} {
		if p[id] > 0 {
			vs = append(vs, Vertex{ID: id, Name: id, Parallelism: p[id], MaxParallelism: 128, IsSource: true})
		}
	}
	state := JobState{InPlaceRescale: true, LastRescale: now.Add(-time.Hour), Stable: StableRun{At: now.Add(-time.Hour), Parallelism: maps.Clone(p)}}
	var samples []Sample
	var h History
	out := map[time.Duration]map[string]int{}
	for at := -20 * time.Minute; at <= d; at += 30 * time.Second {
		s := Sample{Time: now.Add(at), Vertices: map[string]VertexSample{}}
		for _, v := range vs {
			l := load(v.ID, at)
			s.Vertices[v.ID] = running(1000*l, 1000*min(l/float64(v.Parallelism), 1))
		}
		samples = append(samples, s)
		if at < 0 {
			continue
		}
		dec := Evaluate(now.Add(at), cfg, vs, samples, state, h)
		h = dec.History
		if dec.Apply {
			for i := range vs {
				vs[i].Parallelism = dec.Parallelism[vs[i].ID]
			}
			out[at] = maps.Clone(dec.Parallelism)
			state.LastRescale, state.Stable = now.Add(at), StableRun{At: now.Add(at), Parallelism: out[at]}
		}
	}
	return out
}

// Vertex a has idled at a quarter of its 8 subtasks from the start; b takes a step up at 30
// minutes and is rescaled for it. The rescale does not start a's scale-down delay over: a scales
// down an hour after its load fell, not an hour after b's rescale.
func TestARescaleDoesNotStartAnotherVertexsScaleDownDelayOver(t *testing.T) {
	changes := sources(DefaultConfig(), map[string]int{"a": 8, "b": 4}, func(id string, at time.Duration) float64 {
		if id == "a" {
			return 2
		}
		if at >= 30*time.Minute {
			return 4
		}
		return 2.8
	}, 2*time.Hour)
	var down time.Duration
	for at, p := range changes {
		if p["a"] < 8 && (down == 0 || at < down) {
			down = at
		}
	}
	require.NotZero(t, down, "a never scaled down: %v", changes)
	assert.LessOrEqual(t, down, time.Hour+time.Minute, "%v", changes)
}

// A scale-up aligned to a divisor of the key groups can leave the load that asked for it below the
// band at the new parallelism: 11 subtasks 82% busy ask for 13, aligned to 16, where that load is
// 56%. The vertex still keeps 16 for the scale-down delay, as for any scale-up, rather than
// undoing it at the next decision.
func TestAScaleUpIsNotUndoneWithinTheDelay(t *testing.T) {
	changes := sources(DefaultConfig(), map[string]int{"a": 11}, func(_ string, at time.Duration) float64 {
		if at >= 30*time.Minute {
			return 9
		}
		return 7
	}, 2*time.Hour)
	var up time.Duration
	for _, at := range slices.Sorted(maps.Keys(changes)) {
		switch p := changes[at]; {
		case p["a"] == 16:
			up = at
		case up > 0 && at < up+time.Hour:
			t.Errorf("a went to %d at %s, %s after its scale-up", p["a"], at, at-up)
		}
	}
	require.NotZero(t, up, "%v", changes)
}

// Vertex a's load falls at 0, b's at 5 minutes: a's scale-down, due at an hour, waits the five
// minutes for b's, and one rescale does both.
func TestScaleDownsDueWithinARescalesTimeGoTogether(t *testing.T) {
	changes := sources(DefaultConfig(), map[string]int{"a": 8, "b": 8}, func(id string, at time.Duration) float64 {
		if id == "b" && at < 5*time.Minute || at < 0 {
			return 5.6
		}
		return 3
	}, 90*time.Minute)
	require.Len(t, changes, 1, "%v", changes)
	for at, p := range changes {
		assert.Equal(t, map[string]int{"a": 5, "b": 5}, p)
		assert.Greater(t, at, 65*time.Minute)
		assert.Less(t, at, 67*time.Minute)
	}
}

// A vertex at an edge of the tolerance band, in and out of it with the noise from one evaluation
// to the next, shows the same recommendation at each: below the band, as a scale-down it would
// wait for anyway; above it, where the decision is only recommended and so does not rescale.
func TestAVertexAtTheBandsEdgeShowsTheSameRecommendation(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       func(*Config)
		low, high float64 // busy, alternating from one evaluation to the next
	}{
		{"at the bottom, applying", func(*Config) {}, 0.59, 0.61},
		{"at the bottom, recommending", func(c *Config) { c.RecommendOnly = true }, 0.59, 0.61},
		{"at the top, recommending", func(c *Config) { c.RecommendOnly = true }, 0.79, 0.81},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.cfg(&cfg)
			vs := []Vertex{{ID: "map", Name: "Map", Parallelism: 10}}
			state := settled(map[string]int{"map": 10})
			var h History
			shown := map[string]bool{}
			for i := range 20 {
				at := now.Add(time.Duration(i) * 30 * time.Second)
				b := tc.low
				if i%2 == 1 {
					b = tc.high
				}
				samples := series(at.Add(-20*time.Minute), at, 30*time.Second, func(time.Time) map[string]VertexSample {
					return map[string]VertexSample{"map": running(10000*b, 1000*b)}
				})
				d := Evaluate(at, cfg, vs, samples, state, h)
				require.False(t, d.Apply, d.Reason)
				h = d.History
				if i > 0 {
					shown[fmt.Sprint(d.Vertices[0].Recommended)] = true
				}
			}
			assert.Len(t, shown, 1, "recommendations shown: %v", shown)
		})
	}
}
