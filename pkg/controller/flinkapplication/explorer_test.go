package flinkapplication

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The randomized explorer (issue 55): seeded runs of the unit world in which several objects of
// every kind go through random user actions, Flink and Kubernetes faults and operator crashes at any
// of its writes, interleaved with reconcile passes, with the invariants of explorer_invariants_test.go
// checked after every step. A step is one user action, one fault injection or one reconcile pass.
//
// `go test` runs a short set of seeds. A failure prints the seed and the trace of the run; replay it
// with
//
//	go test ./pkg/controller/flinkapplication -run 'TestExplorer$' -explorer.seed=N -explorer.steps=M
//
// (or EXPLORER_SEED=N EXPLORER_STEPS=M). `make fuzz` runs TestExplorerLong: seed after seed from
// EXPLORER_SEED, EXPLORER_STEPS steps each, until EXPLORER_TOTAL_STEPS steps or EXPLORER_DURATION,
// then prints the steps run and the violations found.

var (
	explorerSeed  = flag.Uint64("explorer.seed", 0, "the explorer's seed (0: the short set of seeds)")
	explorerSteps = flag.Int("explorer.steps", 0, "steps of each explorer run (0: the default)")
)

// shortSeeds are the seeds `go test` runs, and shortSteps the steps of each: 21,000 steps, about
// 35 s on two cores. They are seeds whose runs keep every invariant on the code they were chosen on;
// the seeds that found the open defects are named in explorer_regressions_test.go, and `make fuzz`
// runs every seed. shortSeeds were chosen before the explorer ran Flink HA and run without it, as
// they were chosen; shortHASeeds run with it (the last of them varies checkpoint retention too).
var shortSeeds = []uint64{4, 5, 6, 10, 12, 16, 20, 23, 24, 25}

var shortHASeeds = []uint64{200001, 200003, 10000001}

// shortRetentionSeeds vary checkpoint retention (retentionSeeds), one without Flink HA.
var shortRetentionSeeds = []uint64{10000000}

const shortSteps = 1500

// envOr reads a number from the environment, or gives def.
func envOr(name string, def uint64) uint64 {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err == nil {
			return n
		}
	}
	return def
}

func explorerRunSteps() int {
	if *explorerSteps > 0 {
		return *explorerSteps
	}
	return int(envOr("EXPLORER_STEPS", shortSteps))
}

func TestExplorer(t *testing.T) {
	type run struct {
		seed uint64
		ha   bool
	}
	var runs []run
	for _, s := range shortSeeds {
		runs = append(runs, run{s, false})
	}
	for _, s := range shortHASeeds {
		runs = append(runs, run{s, true})
	}
	for _, s := range shortRetentionSeeds {
		runs = append(runs, run{s, false})
	}
	if s := *explorerSeed; s != 0 {
		runs = []run{{s, haWorld(s)}}
	} else if s := envOr("EXPLORER_SEED", 0); s != 0 {
		runs = []run{{s, haWorld(s)}}
	}
	steps := explorerRunSteps()
	start, total := time.Now(), 0
	for _, r := range runs {
		t.Run(fmt.Sprintf("seed=%d,ha=%v", r.seed, r.ha), func(t *testing.T) {
			x := explore(t, r.seed, steps, r.ha)
			total += x.steps
			if len(x.violations) > 0 {
				t.Errorf("%s", x.report())
			}
		})
	}
	elapsed := time.Since(start)
	t.Logf("explorer: %d steps in %s, %.0f steps/s", total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds())
}

// TestExplorerLong is `make fuzz`'s run: many seeds, many steps, every violation reported.
func TestExplorerLong(t *testing.T) {
	budget := envOr("EXPLORER_TOTAL_STEPS", 0)
	if budget == 0 {
		t.Skip("set EXPLORER_TOTAL_STEPS (make fuzz) to run the long explorer")
	}
	seed := envOr("EXPLORER_SEED", 1000)
	steps := explorerRunSteps()
	limit := time.Duration(envOr("EXPLORER_DURATION_SECONDS", 0)) * time.Second
	start, total, runs, found := time.Now(), uint64(0), 0, 0
	var failing []string
	for ; total < budget && (limit == 0 || time.Since(start) < limit); seed++ {
		var x *explorer
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			x = explore(t, seed, steps, haWorld(seed))
			if len(x.violations) > 0 {
				t.Errorf("%s", x.report())
			}
		})
		if x == nil {
			continue
		}
		runs++
		total += uint64(x.steps)
		if len(x.violations) > 0 {
			found += len(x.violations)
			failing = append(failing, fmt.Sprintf("seed %d: %s", seed, x.violations[0]))
			fmt.Printf("explorer violation: seed %d: %s\n", seed, x.violations[0])
		}
		// A line a seed, so that a run stopped before its end still tells how far it got.
		fmt.Printf("explorer progress: %d steps in %d runs (seeds to %d), %d violations, %s\n", total, runs, seed, found,
			time.Since(start).Round(time.Second))
	}
	elapsed := time.Since(start)
	fmt.Printf("explorer: %d steps in %d runs (seeds %d..%d) in %s, %.0f steps/s; %d violations\n", total, runs,
		seed-uint64(runs), seed-1, elapsed.Round(time.Second), float64(total)/elapsed.Seconds(), found)
	for _, f := range failing {
		fmt.Println("  " + f)
	}
}

// explore runs one seed for the given number of steps, or until a step breaks an invariant, with
// Flink HA or without.
func explore(t *testing.T, seed uint64, steps int, ha bool) *explorer {
	x := newExplorerHA(t, seed, ha)
	x.note("seed %d, %d steps, Flink HA %s", seed, steps, x.haFlag())
	for x.steps < steps && len(x.violations) == 0 {
		x.step()
		x.dumpFingerprint()
	}
	t.Logf("seed %d: %d steps (%d user actions, %d faults, %d passes) to %s simulated; worst pass: %d REST calls, %s",
		seed, x.steps, x.actions, x.faults, x.passes, x.w.clock.Now().Sub(x.startTime()).Round(time.Second),
		x.passRESTCalls, x.passTime)
	return x
}

// step is one user action, fault or pass, drawn from the seed, and the checks after it.
func (x *explorer) step() {
	switch n := x.rng.IntN(100); {
	case n < 4:
		x.userAct()
	case n < 7:
		x.injectFault()
	default:
		x.pass()
	}
	x.check()
}

func (x *explorer) startTime() time.Time {
	if len(x.identities) == 0 {
		return x.w.clock.Now()
	}
	return x.identities[0].createdAt
}

// report says what broke, with the seed to replay and the trace of the run.
func (x *explorer) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "explorer seed %d broke an invariant at step %d:\n", x.seed, x.steps)
	for _, v := range x.violations {
		fmt.Fprintf(&b, "  - %s\n", v)
	}
	fmt.Fprintf(&b, "replay: go test ./pkg/controller/flinkapplication -run 'TestExplorer$' -explorer.seed=%d -explorer.steps=%d -explorer.ha=%s\n",
		x.seed, x.steps, x.haFlag())
	b.WriteString("trace (user actions, faults, crashes; passes are not listed):\n")
	for _, line := range x.trace {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteString(x.describe())
	return b.String()
}

// describe shows, for the end of a run, each object's jobs as Flink saw them and its phase history.
func (x *explorer) describe() string {
	var b strings.Builder
	b.WriteString("jobs (JobManager, restored from, states) and phase histories:\n")
	at := func(t time.Time) string { return t.Format("15:04:05.0") }
	for _, id := range x.identities {
		if id.kind == sessionClusterKindName {
			continue
		}
		fmt.Fprintf(&b, "%s:\n", id)
		for _, j := range x.jobsOf(id) {
			var states []string
			for _, s := range j.States {
				states = append(states, s.State+"@"+at(s.Time))
			}
			lost := ""
			if !j.LostAt.IsZero() {
				lost = " lost@" + at(j.LostAt)
			}
			fmt.Fprintf(&b, "  job %s on %s from %q: %s%s\n", j.JobID, j.JobManager, j.RestoredFrom, strings.Join(states, " "), lost)
		}
		if id.gone {
			continue
		}
		if id.kind == applicationKindName {
			for _, h := range x.w.get(id.name).Status.History {
				fmt.Fprintf(&b, "  %s %s -> %s: %s\n", at(h.Time.Time), h.From, h.To, h.Reason)
			}
		} else {
			for _, h := range x.w.sessionJob(id.name).Status.History {
				fmt.Fprintf(&b, "  %s %s -> %s: %s\n", at(h.Time.Time), h.From, h.To, h.Reason)
			}
		}
	}
	return b.String()
}
