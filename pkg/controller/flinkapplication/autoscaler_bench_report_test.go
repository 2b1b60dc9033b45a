//go:build autoscalerbench

package flinkapplication

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// What the autoscaler benchmark reports of a run (autoscaler_bench_test.go), and how it prints it.

// benchLagLimit is how far behind its input a job may be and count as caught up: a second's worth
// of records in the topic.
const benchLagLimit = 1.0

// benchSteadyWindow is the end of each phase whose utilisation is reported: by then the
// autoscaler should have settled.
const benchSteadyWindow = 30 * time.Minute

// benchMaxRescalesPerConstantPhase is the most rescales one stretch of constant load should take:
// a scale-up, a second as the backlog's measure improves, and the scale-down of what catching up
// took. More is counted as oscillation.
const benchMaxRescalesPerConstantPhase = 3

type benchReport struct {
	Commit    string        `json:"commit,omitempty"`
	GoVersion string        `json:"goVersion"`
	Settings  benchSettings `json:"settings"`
	Runs      []benchResult `json:"runs"`
}

// benchSettings are the conditions of the runs.
type benchSettings struct {
	TargetUtilization     float64 `json:"targetUtilization"`
	UtilizationTolerance  float64 `json:"utilizationTolerance"`
	CatchUpDuration       string  `json:"catchUpDuration"`
	MetricsWindow         string  `json:"metricsWindow"`
	StabilizationInterval string  `json:"stabilizationInterval"`
	ScaleDownDelay        string  `json:"scaleDownDelay"`
	CoolDown              string  `json:"coolDown"`
	ReadinessTimeout      string  `json:"readinessTimeout"`
	SampleInterval        string  `json:"sampleInterval"`
	StatusPollInterval    string  `json:"statusPollInterval"`
	ProbeEvery            string  `json:"probeEvery"`
	CancelTime            string  `json:"simulatedCancel"`
	ScheduleTime          string  `json:"simulatedScheduleAndRestore"`
	StartParallelism      int32   `json:"startParallelism"`
	SlotsPerTaskManager   int32   `json:"slotsPerTaskManager"`
}

func (r *benchRun) settings() benchSettings {
	c, env := r.cfg, r.w.env.Config
	timings := benchTimings.Effective()
	app := benchApp(r.v)
	return benchSettings{TargetUtilization: c.TargetUtilization, UtilizationTolerance: c.UtilizationTolerance,
		CatchUpDuration: c.CatchUpDuration.String(), MetricsWindow: c.MetricsWindow.String(),
		StabilizationInterval: c.StabilizationInterval.String(), ScaleDownDelay: c.ScaleDownDelay.String(),
		CoolDown: c.CoolDown.String(), ReadinessTimeout: c.ReadinessTimeout.String(),
		SampleInterval: env.Autoscaler.SampleInterval.String(), StatusPollInterval: env.StatusPollInterval.String(),
		ProbeEvery: benchProbeEvery.String(), CancelTime: timings.Cancel.String(), ScheduleTime: timings.Schedule.String(),
		StartParallelism: app.Spec.Parallelism, SlotsPerTaskManager: *app.Spec.TaskManagerConfig.TaskSlots}
}

// benchResult is what one scenario under one variant came to.
type benchResult struct {
	Scenario       benchScenario `json:"scenario"`
	Variant        benchVariant  `json:"variant"`
	SimulatedHours float64       `json:"simulatedHours"`
	WallSeconds    float64       `json:"wallSeconds"`
	Passes         int           `json:"passes"`
	Vertices       []string      `json:"vertices"`
	// Rescales are the autoscaler's decisions applied (change kind Scaled), WayBacks its returns.
	Rescales         int            `json:"rescales"`
	WayBacks         int            `json:"wayBacks"`
	RescalesByVertex map[string]int `json:"rescalesByVertex"`
	Changes          []benchChange  `json:"changes"`
	// Shown are the decisions status.autoscaler showed in turn.
	Shown []benchShown `json:"shown"`
	// ApplySeconds are how long each target took from status to a job running at it.
	ApplySeconds []float64          `json:"applySeconds"`
	Phases       []benchPhaseResult `json:"phases"`
	// MeanUtilization is each vertex's mean busy fraction over the whole run while the job ran,
	// and SlotHours the slots its widest vertex took (what the TaskManagers cost), integrated.
	MeanUtilization []float64 `json:"meanUtilization"`
	SlotHours       float64   `json:"slotHours"`
	// NotRunningSeconds is the time since the job first ran that it was not RUNNING (restarting
	// for a rescale, mostly), in JobRestarts restarts.
	NotRunningSeconds   float64          `json:"notRunningSeconds"`
	JobRestarts         int              `json:"jobRestarts"`
	Oscillation         benchOscillation `json:"oscillation"`
	StatusWrites        int64            `json:"statusWrites"`
	StatusWritesPerHour float64          `json:"statusWritesPerHour"`
	// StatusWritesTouching counts the status writes that changed each field of status:
	// "autoscaler" is the autoscaler's own.
	StatusWritesTouching map[string]int `json:"statusWritesTouching"`
	Writes               int64          `json:"writes"`
	Events               map[string]int `json:"events"`
	// RESTCallsPerMinute are the operator's requests to Flink, MetricCallsPerMinute those of them
	// for vertex metrics (the autoscaler's samples).
	RESTCallsPerMinute   float64      `json:"restCallsPerMinute"`
	MetricCallsPerMinute float64      `json:"metricCallsPerMinute"`
	Points               []benchPoint `json:"points"`
}

// benchPhaseResult is one phase of a run; times are seconds from the phase's start.
type benchPhaseResult struct {
	Name             string         `json:"name"`
	FromHours        float64        `json:"fromHours"`
	ToHours          float64        `json:"toHours"`
	Constant         bool           `json:"constant"`
	MeanInput        float64        `json:"meanInput"`
	Rescales         int            `json:"rescales"`
	RescalesByVertex map[string]int `json:"rescalesByVertex,omitempty"`
	FirstChange      float64        `json:"firstChange"` // -1: none
	LastChange       float64        `json:"lastChange"`  // -1: none
	// PeakLagSeconds is the most the backlog held, in seconds of the input at the time.
	PeakBacklog    float64 `json:"peakBacklog"`
	PeakLagSeconds float64 `json:"peakLagSeconds"`
	// CaughtUp is, in a phase of constant load, when the backlog first fell to benchLagLimit after
	// it first exceeded it, ChangesUntilCaughtUp the changes made by then; 0 when it never fell
	// behind, -1 when it did not catch up within the phase. Other phases have none: restarts put
	// a job behind for a moment wherever the load goes.
	CaughtUp             *float64 `json:"caughtUp,omitempty"`
	ChangesUntilCaughtUp int      `json:"changesUntilCaughtUp"`
	// BehindSeconds is the time in the phase the backlog held more than benchLagLimit.
	BehindSeconds float64 `json:"behindSeconds"`
	// Utilization is each vertex's mean busy fraction over the phase's last benchSteadyWindow,
	// Parallelism each vertex's at its end, and Settled whether nothing changed in that window.
	Utilization []float64 `json:"utilization"`
	Parallelism []int     `json:"parallelism"`
	Settled     bool      `json:"settled"`
}

// benchOscillation is what the run shows of the autoscaler undoing its own decisions.
type benchOscillation struct {
	Found     bool            `json:"found"`
	Why       []string        `json:"why,omitempty"`
	Reversals []benchReversal `json:"reversals"`
}

// benchReversal is a vertex changing direction: a scale-up after a scale-down, or the other way.
type benchReversal struct {
	Vertex    string  `json:"vertex"`
	At        float64 `json:"t"`
	Gap       float64 `json:"gapSeconds"`
	UpToDown  bool    `json:"upToDown"`
	SamePhase bool    `json:"samePhase"`
}

func (r *benchRun) result() benchResult {
	res := benchResult{Scenario: r.sc, Variant: r.v, SimulatedHours: r.sc.Length.Hours(), Passes: r.passes,
		Vertices: r.vertexNames, Changes: r.changes, Shown: r.shown, ApplySeconds: r.applies, RescalesByVertex: map[string]int{},
		StatusWrites: r.statusWrites.Load(), Writes: r.writes.Load(), StatusWritesTouching: r.touched, Events: r.events, Points: r.points}
	for _, c := range r.changes {
		switch c.Kind {
		case "Scaled":
			res.Rescales++
		case "WentBack":
			res.WayBacks++
		}
		for _, v := range c.Vertices {
			res.RescalesByVertex[v.Vertex]++
		}
	}
	res.StatusWritesPerHour = float64(res.StatusWrites) / res.SimulatedHours
	res.RESTCallsPerMinute = float64(r.w.restCalls.Load()-r.probeCalls) / r.sc.Length.Minutes()
	res.MetricCallsPerMinute = float64(r.metricCalls.Load()-r.probeCalls) / r.sc.Length.Minutes()
	res.NotRunningSeconds, res.JobRestarts = r.downtime()
	for _, p := range r.sc.Phases {
		res.Phases = append(res.Phases, r.phase(p))
	}
	res.MeanUtilization, res.SlotHours = r.usage()
	res.Oscillation = r.oscillation(res.Phases)
	return res
}

// downtime is the time since the job first ran that no job of the application was RUNNING, up to
// the end of the scenario, and how many times a job left RUNNING.
func (r *benchRun) downtime() (seconds float64, restarts int) {
	end := r.origin.Add(r.sc.Length)
	var first time.Time
	running := 0.0
	for _, rec := range r.w.timeline.Jobs(ns + "/" + r.name) {
		for i, s := range rec.States {
			if s.State != "RUNNING" || !s.Time.Before(end) {
				continue
			}
			if first.IsZero() || s.Time.Before(first) {
				first = s.Time
			}
			until := end
			if i+1 < len(rec.States) && rec.States[i+1].Time.Before(end) {
				until = rec.States[i+1].Time
				restarts++
			}
			running += until.Sub(s.Time).Seconds()
		}
	}
	if first.IsZero() {
		return r.sc.Length.Seconds(), 0
	}
	return end.Sub(first).Seconds() - running, restarts
}

// usage is each vertex's mean busy fraction over the probes that found the job running, and the
// slot-hours of its widest vertex.
func (r *benchRun) usage() (util []float64, slotHours float64) {
	util = make([]float64, len(r.vertexNames))
	n := 0
	for _, pt := range r.points {
		if len(pt.Parallelism) > 0 {
			slotHours += float64(slices.Max(pt.Parallelism)) * benchProbeEvery.Hours()
		}
		if len(pt.Busy) == len(util) {
			n++
			for i, b := range pt.Busy {
				util[i] += b
			}
		}
	}
	for i := range util {
		util[i] /= float64(max(n, 1))
	}
	return util, slotHours
}

// phase measures one phase from the probes and the changes within it.
func (r *benchRun) phase(p benchPhase) benchPhaseResult {
	from, to := p.From.Seconds(), p.To.Seconds()
	out := benchPhaseResult{Name: p.Name, FromHours: p.From.Hours(), ToHours: p.To.Hours(), Constant: p.Constant,
		FirstChange: -1, LastChange: -1, RescalesByVertex: map[string]int{}}
	var changeTimes []float64
	for _, c := range r.changes {
		if c.At >= from && c.At < to {
			out.Rescales++
			changeTimes = append(changeTimes, c.At-from)
			for _, v := range c.Vertices {
				out.RescalesByVertex[v.Vertex]++
			}
		}
	}
	if len(changeTimes) > 0 {
		out.FirstChange, out.LastChange = changeTimes[0], changeTimes[len(changeTimes)-1]
	}
	steadyFrom := max(from, to-benchSteadyWindow.Seconds())
	out.Settled = out.LastChange < 0 || out.LastChange+from < steadyFrom
	var inputs, steady int
	fellBehind, caughtUp := false, 0.0
	util := make([]float64, len(r.vertexNames))
	for _, pt := range r.points {
		if pt.At < from || pt.At >= to {
			continue
		}
		inputs++
		out.MeanInput += pt.Input
		out.PeakBacklog = max(out.PeakBacklog, pt.Backlog)
		lag := 0.0
		if pt.Input > 0 {
			lag = pt.Backlog / pt.Input
		}
		out.PeakLagSeconds = max(out.PeakLagSeconds, lag)
		behind := lag > benchLagLimit
		if behind {
			out.BehindSeconds += benchProbeEvery.Seconds()
		}
		switch {
		case behind && !fellBehind:
			fellBehind, caughtUp = true, -1
		case !behind && fellBehind && caughtUp < 0:
			caughtUp = pt.At - from
			for _, ct := range changeTimes {
				if ct <= caughtUp {
					out.ChangesUntilCaughtUp++
				}
			}
		}
		if pt.Parallelism != nil {
			out.Parallelism = pt.Parallelism
		}
		if pt.At >= steadyFrom && len(pt.Busy) == len(util) {
			steady++
			for i, b := range pt.Busy {
				util[i] += b
			}
		}
	}
	if inputs > 0 {
		out.MeanInput /= float64(inputs)
	}
	if p.Constant {
		out.CaughtUp = &caughtUp
	} else {
		out.ChangesUntilCaughtUp = 0
	}
	if steady > 0 {
		for i := range util {
			util[i] /= float64(steady)
		}
		out.Utilization = util
	}
	return out
}

// oscillation looks for the autoscaler undoing itself: a vertex turning from up to down sooner
// than the scale-down delay allows, or the other way within one stretch of constant load or
// sooner than that delay; a vertex turning twice within one stretch of constant load; and more
// than benchMaxRescalesPerConstantPhase rescales in one.
func (r *benchRun) oscillation(phases []benchPhaseResult) benchOscillation {
	var o benchOscillation
	phaseOf := func(t float64) int {
		for i, p := range r.sc.Phases {
			if t >= p.From.Seconds() && t < p.To.Seconds() {
				return i
			}
		}
		return -1
	}
	type move struct {
		at float64
		up bool
	}
	moves := map[string][]move{}
	var order []string
	for _, c := range r.changes {
		for _, v := range c.Vertices {
			if v.To == v.From {
				continue
			}
			if _, ok := moves[v.Vertex]; !ok {
				order = append(order, v.Vertex)
			}
			moves[v.Vertex] = append(moves[v.Vertex], move{at: c.At, up: v.To > v.From})
		}
	}
	delay := r.cfg.ScaleDownDelay.Seconds()
	for _, vertex := range order {
		ms := moves[vertex]
		turns := map[int]int{}
		for i := 1; i < len(ms); i++ {
			if ms[i].up == ms[i-1].up {
				continue
			}
			rev := benchReversal{Vertex: vertex, At: ms[i].at, Gap: ms[i].at - ms[i-1].at, UpToDown: ms[i-1].up,
				SamePhase: phaseOf(ms[i].at) == phaseOf(ms[i-1].at)}
			o.Reversals = append(o.Reversals, rev)
			constant := rev.SamePhase && phaseOf(rev.At) >= 0 && r.sc.Phases[phaseOf(rev.At)].Constant
			switch {
			case rev.Gap < delay:
				o.Why = append(o.Why, fmt.Sprintf("%s turned %s at %s, %s after the change before it (scaleDownDelay %s)",
					vertex, direction(rev.UpToDown), benchClock(rev.At), benchSeconds(rev.Gap), r.cfg.ScaleDownDelay))
			case constant && !rev.UpToDown:
				o.Why = append(o.Why, fmt.Sprintf("%s scaled up again at %s after scaling down under the same constant load",
					vertex, benchClock(rev.At)))
			}
			if constant {
				turns[phaseOf(rev.At)]++
			}
		}
		for ph, n := range turns {
			if n >= 2 {
				o.Why = append(o.Why, fmt.Sprintf("%s changed direction %d times in phase %s of constant load", vertex, n, r.sc.Phases[ph].Name))
			}
		}
	}
	for _, p := range phases {
		if p.Constant && p.Rescales > benchMaxRescalesPerConstantPhase {
			o.Why = append(o.Why, fmt.Sprintf("%d rescales in phase %s of constant load (more than %d)", p.Rescales, p.Name,
				benchMaxRescalesPerConstantPhase))
		}
	}
	o.Found = len(o.Why) > 0
	return o
}

// byCount lists counts, the largest first.
func byCount(m map[string]int) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(out, ", ")
}

func direction(upToDown bool) string {
	if upToDown {
		return "down"
	}
	return "up"
}

// hours is an offset from the start of the load as h:mm:ss.
func benchClock(s float64) string {
	d := time.Duration(math.Round(s)) * time.Second
	return fmt.Sprintf("%d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
}

func benchSeconds(s float64) string {
	if s >= 120 {
		return fmt.Sprintf("%.1f min", s/60)
	}
	return fmt.Sprintf("%.0f s", s)
}

// printBenchReport prints the runs as tables.
func printBenchReport(w io.Writer, rep benchReport) {
	s := rep.Settings
	fmt.Fprintf(w, "\nAutoscaler benchmark: target utilisation %.0f%% ±%.0f, sampleInterval %s, metricsWindow %s, "+
		"stabilizationInterval %s, scaleDownDelay %s, catchUpDuration %s; a rescale costs %s cancel + %s schedule and restore\n",
		100*s.TargetUtilization, 100*s.UtilizationTolerance, s.SampleInterval, s.MetricsWindow, s.StabilizationInterval,
		s.ScaleDownDelay, s.CatchUpDuration, s.CancelTime, s.ScheduleTime)
	for _, res := range rep.Runs {
		fmt.Fprintf(w, "\n== %s / %s: %s; %.0f h simulated in %.1f s (%d passes)\n", res.Scenario.Name, res.Variant.Name,
			res.Scenario.About, res.SimulatedHours, res.WallSeconds, res.Passes)
		var byVertex []string
		for _, v := range res.Vertices {
			byVertex = append(byVertex, fmt.Sprintf("%s %d", v, res.RescalesByVertex[v]))
		}
		fmt.Fprintf(w, "rescales %d, way backs %d; changes per vertex: %s\n", res.Rescales, res.WayBacks, strings.Join(byVertex, ", "))
		if len(res.ApplySeconds) > 0 {
			fmt.Fprintf(w, "each applied in %.0f to %.0f s (status target to the job running at it)\n",
				slices.Min(res.ApplySeconds), slices.Max(res.ApplySeconds))
		}
		fmt.Fprintf(w, "job not running: %.0f s in %d restarts (%.2f%% of the time)\n", res.NotRunningSeconds, res.JobRestarts,
			100*res.NotRunningSeconds/(3600*res.SimulatedHours))
		fmt.Fprintf(w, "operator: %d status writes (%.1f an hour), %d writes of the application in all; the status writes that changed "+
			"each field: %s\n", res.StatusWrites, res.StatusWritesPerHour, res.Writes, byCount(res.StatusWritesTouching))
		fmt.Fprintf(w, "          %.1f Flink REST calls a minute (%.1f of them vertex metrics); events: %s\n", res.RESTCallsPerMinute,
			res.MetricCallsPerMinute, byCount(res.Events))
		if res.Oscillation.Found {
			fmt.Fprintf(w, "OSCILLATION: %s\n", strings.Join(res.Oscillation.Why, "; "))
		} else {
			fmt.Fprintf(w, "oscillation: none (%d reversals of direction, none against the rules)\n", len(res.Oscillation.Reversals))
		}
		var mean []string
		for _, u := range res.MeanUtilization {
			mean = append(mean, fmt.Sprintf("%.0f%%", 100*u))
		}
		fmt.Fprintf(w, "busy over the whole run: %s; %.0f slot-hours (the widest vertex's parallelism over time)\n",
			strings.Join(mean, " "), res.SlotHours)
		printPhases(w, res)
		fmt.Fprintln(w, "changes:")
		for _, c := range res.Changes {
			var mv []string
			for _, v := range c.Vertices {
				mv = append(mv, fmt.Sprintf("%s %d→%d", v.Vertex, v.From, v.To))
			}
			fmt.Fprintf(w, "  %s %-8s %s\n", benchClock(c.At), c.Kind, strings.Join(mv, ", "))
		}
	}
}

func printPhases(w io.Writer, res benchResult) {
	fmt.Fprintf(w, "%-12s %9s %8s %12s %20s %9s %9s | %-14s | %s\n", "phase", "input/s", "rescales", "first change",
		"caught up (changes)", "peak lag", "behind", "parallelism", "busy over the last 30 min")
	for _, p := range res.Phases {
		first := "-"
		if p.FirstChange >= 0 {
			first = "+" + benchSeconds(p.FirstChange)
		}
		caught := "-"
		switch {
		case p.CaughtUp == nil:
		case *p.CaughtUp < 0:
			caught = "not in phase"
		case *p.CaughtUp > 0:
			caught = fmt.Sprintf("%s (%d)", benchSeconds(*p.CaughtUp), p.ChangesUntilCaughtUp)
		default:
			caught = "kept up"
		}
		var par, busy []string
		for _, n := range p.Parallelism {
			par = append(par, fmt.Sprint(n))
		}
		for _, u := range p.Utilization {
			busy = append(busy, fmt.Sprintf("%3.0f%%", 100*u))
		}
		settled := ""
		if !p.Settled {
			settled = " (still changing)"
		}
		fmt.Fprintf(w, "%-12s %9.0f %8d %12s %20s %9s %9s | %-14s | %s%s\n", p.Name, math.Round(p.MeanInput), p.Rescales, first,
			caught, benchSeconds(p.PeakLagSeconds), benchSeconds(p.BehindSeconds), strings.Join(par, " "), strings.Join(busy, " "), settled)
	}
	fmt.Fprintf(w, "(vertices in order: %s)\n", strings.Join(res.Vertices, ", "))
}
