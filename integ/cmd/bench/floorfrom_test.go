package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/flinkfsm/flinkfsm/integ/localcluster"
)

// tenThousand is the options of the run at 10,000 (docs/performance.md, "Running it").
func tenThousand() options {
	return options{n: 10000, checkpointingFraction: 0.5, perNamespace: 1000, soakN: 100, pairs: 1}
}

// earlierRun writes the results of a run of o's size with a measured floor, changed by change.
func earlierRun(t *testing.T, o options, change func(*results)) string {
	t.Helper()
	r := &results{
		Conditions: conditions{N: o.n, CheckpointingFraction: o.checkpointingFraction, AppsPerNamespace: o.perNamespace,
			Kubernetes: localcluster.KubernetesVersion + ", kwok " + localcluster.KwokVersion, CPUs: runtime.NumCPU(),
			Cluster: localcluster.Sizing{Applications: applicationsAtOnce(o)}, Date: "2026-11-27T10:06:16Z", Commit: "8b12f1c"},
		Scale: &scaleResult{N: o.n, FloorSeconds: 1950.6, FloorAppliedSeconds: 1795.5,
			FloorCPU: map[string]float64{"kube-apiserver": 1363}},
	}
	if change != nil {
		change(r)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bench.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAFloorOfTheSameSizeIsTakenWithItsSource(t *testing.T) {
	path := earlierRun(t, tenThousand(), nil)
	taken, err := loadFloor(path, tenThousand())
	if err != nil {
		t.Fatal(err)
	}
	if taken.run.seconds != 1950.6 || taken.run.applied != 1795.5 || taken.run.cpu["kube-apiserver"] != 1363 {
		t.Errorf("floor %+v, want the file's figures", taken.run)
	}
	if s := taken.source; s.Path != path || s.FloorSeconds != 1950.6 || s.Commit != "8b12f1c" {
		t.Errorf("source %+v, want the file's path, floor and commit", s)
	}
}

func TestAFloorOfAnotherSizeIsRefused(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*results)
		want   string
	}{
		{"N", func(r *results) { r.Conditions.N, r.Scale.N = 1000, 1000 }, "N is 1000 there, 10000 here"},
		{"fraction", func(r *results) { r.Conditions.CheckpointingFraction = 0 }, "-checkpointing-fraction is 0 there, 0.5 here"},
		{"per namespace", func(r *results) { r.Conditions.AppsPerNamespace = 2000 }, "-apps-per-namespace is 2000 there, 1000 here"},
		{"cluster", func(r *results) { r.Conditions.Cluster.Applications = 11011 },
			"sized for 11011 applications there, for 10001 here (-size-for 11011"},
		{"Kubernetes", func(r *results) { r.Conditions.Kubernetes = "v1.30.0, kwok v0.6.0" }, `Kubernetes is "v1.30.0, kwok v0.6.0" there`},
		{"no floor", func(r *results) { r.Scale = nil }, "has no floor"},
		{"a floor taken in turn", func(r *results) { r.Scale.FloorFrom = &floorSource{Path: "/tmp/first.json"} },
			"took its floor from /tmp/first.json in turn"},
	} {
		_, err := loadFloor(earlierRun(t, tenThousand(), c.change), tenThousand())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

func TestTheFloorsFileIsNotOverwrittenByThisRunsResults(t *testing.T) {
	o := tenThousand()
	o.out = earlierRun(t, o, nil)
	if _, err := loadFloor(o.out, o); err == nil || !strings.Contains(err.Error(), "give -out another file") {
		t.Errorf("-out the same file as -floor-from: %v, want it refused", err)
	}
}

func TestApplicationsPerNamespaceOfOlderResultsComeFromTheirCommand(t *testing.T) {
	for _, c := range []struct {
		command string
		n, want int
	}{
		{"go run ./integ/cmd/bench -n 10000 -apps-per-namespace 500", 10000, 500},
		{"go run ./integ/cmd/bench -n 10000 --apps-per-namespace=2000", 10000, 2000},
		{"go run ./integ/cmd/bench -n 10000 -apps-per-namespace 0", 10000, 10000},
		// Without the flag, up to 1,000 is one namespace before the flag and at its default alike.
		{"go run ./integ/cmd/bench -n 800", 800, 800},
	} {
		got, err := recordedPerNamespace(conditions{N: c.n, Command: c.command})
		if err != nil || got != c.want {
			t.Errorf("%q: %d, %v; want %d", c.command, got, err, c.want)
		}
	}
}

func TestTheReportSaysTheFloorWasTaken(t *testing.T) {
	r := &results{Single: &singleResult{}, Steady: &steadyResult{},
		Scale: &scaleResult{N: 10000, FloorSeconds: 1950.6, OperatorSeconds: 2400,
			FloorFrom: &floorSource{Path: "/tmp/bench-10k.json", FloorSeconds: 1950.6, Date: "2026-11-27T10:06:16Z", Commit: "8b12f1c"}}}
	r.evaluate()
	found := false
	for _, f := range r.Figures {
		found = found || (strings.Contains(f.Name, "NOT MEASURED: taken from /tmp/bench-10k.json") && f.Value == "1950.60 s")
	}
	if !found {
		t.Errorf("figures %+v do not say the floor was taken from the file", r.Figures)
	}
	var out strings.Builder
	r.print(&out)
	if !strings.Contains(out.String(), "the floor was not measured in this run: its 1950.60 s and every floor figure below are from /tmp/bench-10k.json") {
		t.Errorf("report does not say where the floor came from:\n%s", out.String())
	}
}

// A run keeps its floor as soon as it has measured it; a later run takes it from there.
func TestAKeptFloorIsTakenAsAResultsFilesFloor(t *testing.T) {
	o := tenThousand()
	o.out = filepath.Join(t.TempDir(), "bench-10k.json")
	c := conditions{N: o.n, CheckpointingFraction: o.checkpointingFraction, AppsPerNamespace: o.perNamespace,
		Kubernetes: localcluster.KubernetesVersion + ", kwok " + localcluster.KwokVersion, CPUs: runtime.NumCPU(),
		Cluster: localcluster.Sizing{Applications: applicationsAtOnce(o)}, Date: "2026-11-28T22:56:00Z", Commit: "dd0f678"}
	path := floorFile(o.out)
	if path == o.out || !strings.HasSuffix(path, "bench-10k.floor.json") {
		t.Fatalf("floor file %s beside %s", path, o.out)
	}
	if err := writeFloor(path, c, o.n, floorRun{seconds: 3516.08, applied: 3400, cpu: map[string]float64{"kube-apiserver": 2310.5}}); err != nil {
		t.Fatal(err)
	}
	taken, err := loadFloor(path, o)
	if err != nil {
		t.Fatal(err)
	}
	if taken.run.seconds != 3516.08 || taken.run.cpu["kube-apiserver"] != 2310.5 || taken.source.Commit != "dd0f678" {
		t.Errorf("taken %+v from %+v, want the kept floor and its run's commit", taken.run, taken.source)
	}
}

// A run without a floor (-no-floor) says so, and never reports every target met.
func TestAReportWithoutAFloorJudgesNoRatio(t *testing.T) {
	r := &results{Single: &singleResult{}, Steady: &steadyResult{},
		Scale: &scaleResult{N: 10000, OperatorSeconds: 2400, NoFloor: true}}
	r.evaluate()
	var said, judged bool
	for _, f := range r.Figures {
		said = said || strings.Contains(f.Name, "floor: NOT MEASURED (-no-floor)")
		judged = judged || (strings.Contains(f.Name, "operator / floor") && f.Value == "NOT JUDGED (-no-floor)" && f.OK != nil && !*f.OK)
	}
	if !said || !judged {
		t.Errorf("figures %+v do not say the floor was not measured and the ratio not judged", r.Figures)
	}
	if r.TargetsMet {
		t.Error("a run without a floor reports every target met")
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("results without a floor do not marshal: %v", err)
	}
}
