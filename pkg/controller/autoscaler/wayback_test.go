package autoscaler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWayBackReturnsARescaledJobThatDoesNotRunStable(t *testing.T) {
	cfg := DefaultConfig() // readinessTimeout 3m, coolDown 1h
	decided := t0.Add(2 * time.Hour)
	applied := decided.Add(30 * time.Second)
	stable := StableRun{At: t0.Add(time.Minute), Parallelism: map[string]int{"src": 2, "map": 4, "sink": 2}}
	scaled := Change{Time: decided, Kind: Scaled, Vertices: []VertexChange{{ID: "src", From: 2, To: 4}, {ID: "map", From: 4, To: 8}}}
	for _, tc := range []struct {
		name    string
		now     time.Time
		state   func(*JobState)
		history func(*History)
		back    bool
		reason  string
	}{
		{"the rescaled job failed", applied.Add(time.Minute), func(s *JobState) { s.Failed = true }, nil, true,
			"the job failed after the rescale at 2026-11-01T14:00:30Z: back to the parallelism that ran stable at 2026-11-01T12:01:00Z"},
		{"it did not run stable within readinessTimeout", applied.Add(3 * time.Minute), nil, nil, true,
			"did not run stable within readinessTimeout (3m0s)"},
		{"it still has time to run stable", applied.Add(3*time.Minute - time.Second), nil, nil, false,
			"the rescaled job has until 2026-11-01T14:03:30Z to run stable"},
		{"it ran stable", applied.Add(time.Hour), func(s *JobState) {
			s.Failed, s.Stable = true, StableRun{At: applied.Add(time.Minute), Parallelism: map[string]int{"src": 4, "map": 8, "sink": 2}}
		}, nil, false, "the rescaled job ran stable"},
		{"the rescale has not taken effect", applied.Add(time.Hour), func(s *JobState) { s.Failed, s.LastRescale = true, t0 }, nil, false,
			"has not taken effect"},
		{"the autoscaler did not rescale it", applied.Add(time.Hour), func(s *JobState) { s.Failed = true },
			func(h *History) { h.Changes = nil }, false, "no rescale by the autoscaler"},
		{"it only recommended", applied.Add(time.Hour), func(s *JobState) { s.Failed = true },
			func(h *History) { h.Changes[0].Kind = Recommended }, false, "no rescale by the autoscaler"},
		{"it went back already", applied.Add(time.Hour), func(s *JobState) { s.Failed = true },
			func(h *History) {
				h.Changes = append(h.Changes, Change{Time: applied.Add(time.Minute), Kind: WentBack})
			}, false,
			"no rescale by the autoscaler"},
		{"no parallelism ran stable", applied.Add(time.Hour), func(s *JobState) { s.Failed, s.Stable = true, StableRun{} },
			func(h *History) { h.Stable = StableRun{} }, false, "nothing to go back to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := JobState{FreshState: true, LastRescale: applied, Stable: stable}
			h := History{Stable: stable, Changes: []Change{scaled}}
			if tc.state != nil {
				tc.state(&state)
			}
			if tc.history != nil {
				tc.history(&h)
			}
			d := WayBack(tc.now, cfg, state, h)
			assert.Equal(t, tc.back, d.Apply, d.Reason)
			assert.Equal(t, tc.back, d.WayBack)
			assert.Contains(t, d.Reason, tc.reason)
			if !tc.back {
				assert.True(t, d.History.HoldUntil.IsZero())
				return
			}
			assert.Equal(t, stable.Parallelism, d.Parallelism)
			assert.Equal(t, tc.now.Add(cfg.CoolDown), d.History.HoldUntil)
			last := d.History.Changes[len(d.History.Changes)-1]
			assert.Equal(t, WentBack, last.Kind)
			assert.Equal(t, []VertexChange{{ID: "map", From: 8, To: 4}, {ID: "src", From: 4, To: 2}}, last.Vertices)
			assert.Equal(t, "sink", d.Vertices[1].ID)
			assert.Equal(t, 2, d.Vertices[1].Current, "a vertex the rescale left alone stays")
		})
	}
}

func TestAfterAWayBackTheAutoscalerCoolsDown(t *testing.T) {
	cfg := DefaultConfig()
	vs, _, _ := overloaded()
	wentBack := t0.Add(time.Hour)
	back := WayBack(wentBack, cfg, JobState{Failed: true, LastRescale: t0, Stable: StableRun{At: t0.Add(-time.Hour), Parallelism: map[string]int{"src": 2}}},
		History{Changes: []Change{{Time: t0, Kind: Scaled, Vertices: []VertexChange{{ID: "src", From: 2, To: 3}}}}})
	require.True(t, back.Apply, back.Reason)

	// The job runs stable again at 2 a minute after going back, overloaded as before.
	samples := series(wentBack, wentBack.Add(3*time.Hour), 30*time.Second, func(time.Time) map[string]VertexSample {
		return map[string]VertexSample{"src": running(2000, 950)}
	})
	state := JobState{FreshState: true, LastRescale: wentBack, Stable: StableRun{At: wentBack.Add(time.Minute), Parallelism: map[string]int{"src": 2}}}
	for _, tc := range []struct {
		after time.Duration
		apply bool
	}{{30 * time.Minute, false}, {cfg.CoolDown - time.Second, false}, {cfg.CoolDown, true}} {
		d := Evaluate(wentBack.Add(tc.after), cfg, vs, samples, state, back.History)
		assert.Equal(t, tc.apply, d.Apply, "%s after going back: %s", tc.after, d.Reason)
		if !tc.apply {
			assert.Contains(t, d.Reason, "cooling down")
		}
	}
}
