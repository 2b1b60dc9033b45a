package autoscaler

import (
	"time"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// now is the time of most evaluations in the tests: long after the job's last change at t0.
var now = t0.Add(2 * time.Hour)

// series is a sample every `every` from `from` to `to`, each vertex showing what at says.
func series(from, to time.Time, every time.Duration, at func(t time.Time) map[string]VertexSample) []Sample {
	var out []Sample
	for t := from; !t.After(to); t = t.Add(every) {
		out = append(out, Sample{Time: t, Vertices: at(t)})
	}
	return out
}

// steady is the last 20 minutes before now of samples every 30 seconds, each showing the same.
func steady(m map[string]VertexSample) []Sample {
	return series(now.Add(-20*time.Minute), now, 30*time.Second, func(time.Time) map[string]VertexSample { return m })
}

// running is a vertex taking `in` records a second at busy ms per second, and sending them on.
func running(in, busy float64) VertexSample {
	return VertexSample{NumRecordsInPerSecond: in, NumRecordsOutPerSecond: in, BusyTimeMsPerSecond: busy}
}

// settled is a job that last changed at t0 and ran stable with parallelism p a minute later,
// with fresh state in the ledger.
func settled(p map[string]int) JobState {
	return JobState{FreshState: true, LastRescale: t0, Stable: StableRun{At: t0.Add(time.Minute), Parallelism: p}}
}

// overloaded is a one-vertex job that runs at 95% busy: a scale-up from 2 to 3 is due.
func overloaded() ([]Vertex, []Sample, JobState) {
	vs := []Vertex{{ID: "src", Name: "Source", Parallelism: 2, MaxParallelism: 128, IsSource: true}}
	return vs, steady(map[string]VertexSample{"src": running(2000, 950)}), settled(map[string]int{"src": 2})
}
