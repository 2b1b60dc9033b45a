package main

import (
	"fmt"
	"strings"
)

// autoscalerResults is the part of `make bench-autoscaler`'s JSON
// (pkg/controller/flinkapplication/autoscaler_bench_report_test.go) the table shows: one column a
// run, the figures that say how the autoscaler behaved and what it cost.
type autoscalerResults struct {
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Runs      []struct {
		Scenario struct {
			Name  string `json:"name"`
			About string `json:"about"`
		} `json:"scenario"`
		Variant struct {
			Name string `json:"name"`
		} `json:"variant"`
		SimulatedHours   float64        `json:"simulatedHours"`
		Vertices         []string       `json:"vertices"`
		Rescales         int            `json:"rescales"`
		WayBacks         int            `json:"wayBacks"`
		RescalesByVertex map[string]int `json:"rescalesByVertex"`
		MeanUtilization  []float64      `json:"meanUtilization"`
		SlotHours        float64        `json:"slotHours"`
		NotRunning       float64        `json:"notRunningSeconds"`
		JobRestarts      int            `json:"jobRestarts"`
		Oscillation      struct {
			Found bool     `json:"found"`
			Why   []string `json:"why"`
		} `json:"oscillation"`
		StatusWrites         int64          `json:"statusWrites"`
		StatusWritesTouching map[string]int `json:"statusWritesTouching"`
		Events               map[string]int `json:"events"`
		RESTCallsPerMinute   float64        `json:"restCallsPerMinute"`
		MetricCallsPerMinute float64        `json:"metricCallsPerMinute"`
	} `json:"runs"`
}

func (r *autoscalerResults) markdown(date string) string {
	var b strings.Builder
	commit := r.Commit
	if commit == "" {
		commit = "a commit not recorded"
	}
	fmt.Fprintf(&b, "`make bench-autoscaler` at %s, %s, %s.\n\n", commit, date, r.GoVersion)
	header, rule := []string{"figure"}, []string{"---"}
	for _, run := range r.Runs {
		header = append(header, run.Scenario.Name+", "+run.Variant.Name)
		rule = append(rule, "---")
	}
	row := func(name string, value func(i int) string) {
		cells := []string{name}
		for i := range r.Runs {
			cells = append(cells, cell(value(i)))
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintf(&b, "| %s |\n| %s |\n", strings.Join(header, " | "), strings.Join(rule, " | "))
	row("simulated hours", func(i int) string { return fmt.Sprintf("%g", r.Runs[i].SimulatedHours) })
	row("rescales (by vertex)", func(i int) string {
		run := r.Runs[i]
		var by []string
		for _, v := range run.Vertices {
			by = append(by, fmt.Sprint(run.RescalesByVertex[v]))
		}
		return fmt.Sprintf("%d (%s)", run.Rescales, strings.Join(by, ", "))
	})
	row("way backs", func(i int) string { return fmt.Sprint(r.Runs[i].WayBacks) })
	row("busy over the whole run, by vertex", func(i int) string {
		var pct []string
		for _, u := range r.Runs[i].MeanUtilization {
			pct = append(pct, fmt.Sprintf("%.0f%%", 100*u))
		}
		return strings.Join(pct, "/")
	})
	row("slot-hours", func(i int) string { return fmt.Sprintf("%.0f", r.Runs[i].SlotHours) })
	row("job not running", func(i int) string {
		run := r.Runs[i]
		return fmt.Sprintf("%.0f s in %d restarts (%.2f%%)", run.NotRunning, run.JobRestarts,
			100*run.NotRunning/(run.SimulatedHours*3600))
	})
	row("oscillation", func(i int) string {
		if o := r.Runs[i].Oscillation; o.Found {
			return "**found**: " + strings.Join(o.Why, "; ")
		}
		return "none"
	})
	row("status writes (changing status.autoscaler)", func(i int) string {
		return fmt.Sprintf("%d (%d)", r.Runs[i].StatusWrites, r.Runs[i].StatusWritesTouching["autoscaler"])
	})
	row("ScalingReport Events", func(i int) string { return fmt.Sprint(r.Runs[i].Events["ScalingReport"]) })
	row("Flink REST calls a minute (vertex metrics)", func(i int) string {
		return fmt.Sprintf("%.1f (%.1f)", r.Runs[i].RESTCallsPerMinute, r.Runs[i].MetricCallsPerMinute)
	})
	return b.String()
}
