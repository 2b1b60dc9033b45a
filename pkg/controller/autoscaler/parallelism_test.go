package autoscaler

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLimitsBoundTheRecommendation(t *testing.T) {
	noAlign := DefaultConfig()
	noAlign.AlignmentMargin = 0
	with := func(c Config, f func(*Config)) Config { f(&c); return c }
	for _, tc := range []struct {
		name   string
		cfg    Config
		vertex Vertex
		want   int
		got    int
		why    string
	}{
		{"a scale-up is at most maxScaleUpFactor", noAlign, Vertex{Parallelism: 2}, 20, 8, "×4"},
		{"a scale-down is at most maxScaleDownFactor", noAlign, Vertex{Parallelism: 9}, 1, 5, "÷2"},
		{"a configured least, by name", with(noAlign, func(c *Config) { c.Vertices = map[string]VertexLimits{"Window": {Min: 3}} }),
			Vertex{ID: "w", Name: "Window", Parallelism: 4}, 2, 3, "at least 3"},
		{"a configured greatest, by id", with(noAlign, func(c *Config) { c.Vertices = map[string]VertexLimits{"w": {Max: 5}} }),
			Vertex{ID: "w", Name: "Window", Parallelism: 4}, 8, 5, "at most 5 as configured"},
		{"the operator's greatest", with(noAlign, func(c *Config) { c.MaxParallelism = 6 }), Vertex{Parallelism: 4}, 8, 6, "at most 6"},
		{"never above maxParallelism", noAlign, Vertex{Parallelism: 100, MaxParallelism: 128}, 200, 128, "maxParallelism 128"},
		{"a source never above its partitions", noAlign, Vertex{Parallelism: 8, IsSource: true, Partitions: 12}, 20, 12, "12 partitions"},
		{"partitions win over a configured least", with(noAlign, func(c *Config) { c.MinParallelism = 16 }),
			Vertex{Parallelism: 8, IsSource: true, Partitions: 12}, 20, 12, "12 partitions"},
		{"partitions win over the scale-down factor", noAlign, Vertex{Parallelism: 40, IsSource: true, Partitions: 12}, 40, 12, "12 partitions"},
		{"a vertex that is not a source reads no partitions", noAlign, Vertex{Parallelism: 8, Partitions: 12}, 20, 20, ""},
		{"unknown partitions do not cap", noAlign, Vertex{Parallelism: 8, IsSource: true}, 20, 20, ""},
		{"hard limits win over the factors", with(noAlign, func(c *Config) { c.MinParallelism = 10 }), Vertex{Parallelism: 2}, 3, 10, "at least 10"},

		{"aligned up to a divisor of the key groups", DefaultConfig(), Vertex{Parallelism: 4, MaxParallelism: 128}, 7, 8, "aligned to 8"},
		{"a source aligned to its partitions", DefaultConfig(), Vertex{Parallelism: 2, IsSource: true, Partitions: 12, MaxParallelism: 128}, 5, 6, "partitions"},
		{"no divisor near enough: the recommendation stands", DefaultConfig(), Vertex{Parallelism: 40, MaxParallelism: 128}, 65, 65, ""},
		{"no divisor within the limits: the recommendation stands", with(DefaultConfig(), func(c *Config) { c.MaxParallelism = 7 }),
			Vertex{Parallelism: 4, MaxParallelism: 120}, 7, 7, ""},
		{"no divisor within the scale-up factor: the recommendation stands", DefaultConfig(), Vertex{Parallelism: 1, MaxParallelism: 120}, 9, 4, "×4"},
		{"a scale-down never aligns back to no change", DefaultConfig(), Vertex{Parallelism: 10, MaxParallelism: 10}, 9, 9, ""},
		{"a scale-down aligns below the current parallelism", DefaultConfig(), Vertex{Parallelism: 12, MaxParallelism: 128}, 7, 8, "aligned to 8"},
		{"no change is not aligned", DefaultConfig(), Vertex{Parallelism: 7, MaxParallelism: 128}, 7, 7, ""},
		{"alignment off", noAlign, Vertex{Parallelism: 4, MaxParallelism: 128}, 7, 7, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := limit(tc.vertex, tc.want, tc.cfg)
			assert.Equal(t, tc.got, got, why)
			if tc.why == "" {
				assert.NotContains(t, why, "aligned")
			} else {
				assert.Contains(t, why, tc.why)
			}
		})
	}
}

// An alignment that must land on a divisor of the key groups refuses a needed scale-up when none
// lies near: here the load needs 58 subtasks and the nearest divisor of 100 above it is 100.
func TestAlignmentNeverVetoesANeededScaleUp(t *testing.T) {
	v := []Vertex{{ID: "map", Parallelism: 40, MaxParallelism: 100}}
	// 40 subtasks busy all the time: 40/0.7 are needed.
	d := Evaluate(now, DefaultConfig(), v, steady(map[string]VertexSample{"map": running(36400, 1000)}),
		settled(map[string]int{"map": 40}), History{})
	require.True(t, d.Apply, d.Reason)
	assert.Equal(t, 58, d.Parallelism["map"], d.Reason)
}

func TestASourceIsNeverScaledPastItsPartitions(t *testing.T) {
	v := []Vertex{{ID: "src", Parallelism: 4, MaxParallelism: 128, IsSource: true, Partitions: 6}}
	m := running(4000, 1000)
	m.PendingRecords, m.PendingKnown = 5_000_000, true
	d := Evaluate(now, DefaultConfig(), v, steady(map[string]VertexSample{"src": m}), settled(map[string]int{"src": 4}), History{})
	require.True(t, d.Apply, d.Reason)
	assert.Equal(t, 6, d.Parallelism["src"])
	assert.Contains(t, d.Vertices[0].Reason, "its 6 partitions")
}

func TestUtilizationWithinTheBandKeepsTheParallelism(t *testing.T) {
	v := Vertex{ID: "map", Parallelism: 10}
	for _, tc := range []struct {
		target float64
		want   int
	}{
		{target: 590, want: 9},  // utilization 0.59: outside the band of 0.6 to 0.8
		{target: 610, want: 10}, // 0.61: 9 would do at 0.7
		{target: 700, want: 10},
		{target: 790, want: 10}, // 0.79: 12 would be needed at 0.7
		{target: 810, want: 12}, // 0.81: outside
	} {
		r := &Rates{ProcessingRate: 100, Target: tc.target}
		got, why := recommend(v, r, DefaultConfig())
		assert.Equal(t, tc.want, got, why)
	}
}
