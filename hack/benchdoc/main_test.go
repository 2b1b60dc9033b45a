package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchJSON is the shape integ/cmd/bench writes (report.go), cut to a few figures.
const benchJSON = `{
  "conditions": {"command": "go run ./integ/cmd/bench -n 100 -steady 3m0s", "date": "2026-11-27T09:50:00Z",
    "commit": "47b1eb9", "cpus": 2, "loadAverageAtStart": "0.45 0.30 0.20", "kubernetes": "v1.34.4, kwok v0.7.0",
    "n": 100, "workers": 12, "runtimeEnvironment": {"GOGC": "100"}},
  "single": {}, "scale": {}, "steady": {},
  "figures": [
    {"name": "(a) one app create → Running", "value": "2.57 s", "target": "—"},
    {"name": "(b) operator / floor, jobStabilizationPeriod left out", "value": "1.50×", "target": "≤ 1.5×", "ok": true},
    {"name": "(c) reconcile latency p99", "value": "62.0 ms", "target": "< 50 ms", "ok": false},
    {"name": "(c) a value | with a bar", "value": "1 | 2", "target": "—"}
  ],
  "targetsMet": false
}`

// autoscalerJSON is the shape `make bench-autoscaler` writes, cut to one run.
const autoscalerJSON = `{
  "commit": "af3b229", "goVersion": "go1.25.4",
  "runs": [{"scenario": {"name": "step"}, "variant": {"name": "in-place"}, "simulatedHours": 6,
    "vertices": ["source", "parse", "window", "sink"], "rescales": 4, "wayBacks": 0,
    "rescalesByVertex": {"source": 2, "parse": 3, "window": 3, "sink": 3},
    "meanUtilization": [0.32, 0.45, 0.6, 0.46], "slotHours": 63.2, "notRunningSeconds": 48, "jobRestarts": 4,
    "oscillation": {"found": false}, "statusWrites": 387, "statusWritesTouching": {"autoscaler": 23},
    "events": {"ScalingReport": 19}, "restCallsPerMinute": 21.1, "metricCallsPerMinute": 8.0}]
}`

func TestABenchRunRendersItsCommandCommitDateAndEveryFigureAsJudged(t *testing.T) {
	name, table, err := render([]byte(benchJSON), "")
	if err != nil {
		t.Fatal(err)
	}
	if name != "n100" {
		t.Errorf("block %q, want n100", name)
	}
	for _, want := range []string{
		"`go run ./integ/cmd/bench -n 100 -steady 3m0s` at 47b1eb9, 2026-11-27: 2 CPUs, load 0.45 0.30 0.20 at the start",
		"12 workers, GOGC=100. **Not every target met.**",
		"| (a) one app create → Running | 2.57 s | — |  |",
		"| (b) operator / floor, jobStabilizationPeriod left out | 1.50× | ≤ 1.5× | ✓ |",
		"| (c) reconcile latency p99 | 62.0 ms | < 50 ms | **missed** |",
		`| (c) a value \| with a bar | 1 \| 2 | — |  |`,
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
}

func TestASoakOnlyRunIsTheSoakBlock(t *testing.T) {
	name, _, err := render([]byte(`{"conditions": {"n": 100}, "soak": {}, "figures": [], "targetsMet": true}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if name != "soak" {
		t.Errorf("block %q, want soak", name)
	}
}

func TestAnAutoscalerRunRendersAColumnPerRun(t *testing.T) {
	name, table, err := render([]byte(autoscalerJSON), "2026-11-27")
	if err != nil {
		t.Fatal(err)
	}
	if name != "autoscaler" {
		t.Errorf("block %q, want autoscaler", name)
	}
	for _, want := range []string{
		"`make bench-autoscaler` at af3b229, 2026-11-27, go1.25.4.",
		"| figure | step, in-place |",
		"| rescales (by vertex) | 4 (2, 3, 3, 3) |",
		"| busy over the whole run, by vertex | 32%/45%/60%/46% |",
		"| slot-hours | 63 |",
		"| job not running | 48 s in 4 restarts (0.22%) |",
		"| oscillation | none |",
		"| status writes (changing status.autoscaler) | 387 (23) |",
		"| ScalingReport Events | 19 |",
		"| Flink REST calls a minute (vertex metrics) | 21.1 (8.0) |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
}

func TestOnlyTheNamedBlockOfTheDocumentIsReplaced(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "performance.md")
	in := filepath.Join(dir, "bench-results.json")
	before := "# Performance\n\n<!-- figures:n100 -->\nold table\n<!-- /figures:n100 -->\n\nbetween\n\n" +
		"<!-- figures:n1000 -->\nother table\n<!-- /figures:n1000 -->\n"
	if err := os.WriteFile(doc, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, []byte(benchJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(in, doc, "", ""); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	got := string(after)
	if strings.Contains(got, "old table") || !strings.Contains(got, "| (c) reconcile latency p99 | 62.0 ms |") {
		t.Errorf("block n100 not replaced:\n%s", got)
	}
	if !strings.Contains(got, "between") || !strings.Contains(got, "<!-- figures:n1000 -->\nother table\n<!-- /figures:n1000 -->") {
		t.Errorf("text outside block n100 changed:\n%s", got)
	}
	if !strings.HasSuffix(strings.Split(got, "<!-- /figures:n100 -->")[0], "|\n") {
		t.Errorf("the block's end marker does not follow the table on a line of its own:\n%s", got)
	}
}

func TestABlockTheDocumentLacksIsRefusedNamingThoseItHas(t *testing.T) {
	_, err := replaceBlock("<!-- figures:n100 -->\nx\n<!-- /figures:n100 -->\n", "n10000", "table\n")
	if err == nil || !strings.Contains(err.Error(), `no block "n10000"`) || !strings.Contains(err.Error(), "blocks here: n100") {
		t.Errorf("err = %v, want a refusal naming block n100", err)
	}
}
