package flinkapplication

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// A seed must replay its run exactly, or a violation found by `make fuzz` cannot be looked at
// again. Ids come from the seed, faults are drawn per request path, jar transfers end within the
// pass that started them and the explorer's JobManager proxy takes one connection per request; this
// test runs a seed twice and compares what every step looked like.
func TestExplorerReplaysASeedExactly(t *testing.T) {
	// Seed 2008 without Flink HA, as the test was written; a run with HA recovers jobs and reruns
	// them under new ids, which must come from the seed too.
	for _, r := range []struct {
		seed  uint64
		steps int
		ha    bool
	}{{2008, 1200, false}, {2009, 1200, true}} {
		first, second := fingerprints(t, r.seed, r.steps, r.ha), fingerprints(t, r.seed, r.steps, r.ha)
		for i := range first {
			if i >= len(second) || first[i] != second[i] {
				other := "nothing"
				if i < len(second) {
					other = second[i]
				}
				t.Fatalf("seed %d (HA %v) ran differently the second time, from step %d:\n first: %s\nsecond: %s", r.seed, r.ha, i+1,
					first[i], other)
			}
		}
	}
}

// fingerprints runs the seed and gives the fingerprint of every step.
func fingerprints(t *testing.T, seed uint64, steps int, ha bool) []string {
	var out []string
	t.Run(fmt.Sprintf("seed=%d,ha=%v", seed, ha), func(t *testing.T) {
		x := newExplorerHA(t, seed, ha)
		for x.steps < steps && len(x.violations) == 0 {
			x.step()
			out = append(out, x.fingerprint())
		}
	})
	return out
}

// fingerprint is one line of what a run looks like after a step: the simulated time, the last
// pass, each object's phase and its jobs' states.
func (x *explorer) fingerprint() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s %s", x.steps, x.w.clock.Now().Format("15:04:05.000"), x.lastPass)
	for _, id := range x.live() {
		switch id.kind {
		case applicationKindName:
			fmt.Fprintf(&b, " %s:%s", id.name, x.w.get(id.name).Status.Phase)
		case sessionJobKindName:
			fmt.Fprintf(&b, " %s:%s", id.name, x.w.sessionJob(id.name).Status.Phase)
		default:
			continue
		}
		var states []string
		for _, j := range x.jobsOf(id) {
			if n := len(j.States); n > 0 {
				states = append(states, j.JobID+"="+j.States[n-1].State)
			}
		}
		fmt.Fprintf(&b, "[%s]", strings.Join(states, ","))
	}
	return b.String()
}

// dumpFingerprint appends the step's fingerprint to the file EXPLORER_FINGERPRINT names, when set:
// two runs of one seed then diff step by step.
func (x *explorer) dumpFingerprint() {
	p := os.Getenv("EXPLORER_FINGERPRINT")
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		x.t.Fatalf("EXPLORER_FINGERPRINT: %v", err)
	}
	defer f.Close()
	fmt.Fprintln(f, x.fingerprint())
}
