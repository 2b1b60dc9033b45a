package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/integ/localcluster"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

type results struct {
	Conditions conditions      `json:"conditions"`
	Single     *singleResult   `json:"single"`
	Scale      *scaleResult    `json:"scale"`
	Steady     *steadyResult   `json:"steady"`
	Soak       *soakResult     `json:"soak,omitempty"`
	Takeover   *takeoverResult `json:"takeover,omitempty"`
	// SteadyAgain is (g): (c)'s window measured again under each -steady-again variant, in order.
	SteadyAgain []steadyAgainResult `json:"steadyAgain,omitempty"`
	Figures     []figure            `json:"figures"`
	// TargetsMet is whether every figure with a target met it.
	TargetsMet bool `json:"targetsMet"`
}

// conditions are what the figures depend on besides the code: absolute times drift with the
// machine and its load, which is why the targets are ratios and counts.
type conditions struct {
	Command          string  `json:"command"`
	Date             string  `json:"date"`
	Commit           string  `json:"commit"`
	CPUs             int     `json:"cpus"`
	LoadAverageStart string  `json:"loadAverageAtStart"`
	Kubernetes       string  `json:"kubernetes"`
	N                int     `json:"n"`
	SteadySeconds    float64 `json:"steadySeconds"`
	Updates          int     `json:"updates"`
	// CheckpointRetained is the checkpointing applications' state.checkpoints.num-retained; 0 when
	// they set none.
	CheckpointRetained int               `json:"checkpointRetained"`
	OperatorConfig     map[string]string `json:"operatorConfig"`
	// RuntimeEnvironment is the Go runtime's variables the operator inherits from the bench (GOGC
	// and the like), which change its collector's CPU and so its latency; empty when none is set.
	RuntimeEnvironment map[string]string `json:"runtimeEnvironment,omitempty"`
	SimulatorTimings   map[string]string `json:"simulatorTimings"`
	// CheckpointingFraction is the share of (b)'s applications that checkpoint every 10 s.
	CheckpointingFraction float64 `json:"checkpointingFraction"`
	// AppsPerNamespace is how many of (b)'s applications share a namespace, which the floor's cost
	// depends on as much as on N (see fleetNamespace): -floor-from compares it.
	AppsPerNamespace int `json:"appsPerNamespace"`
	// Cluster is what the local cluster was sized for and how.
	Cluster localcluster.Sizing `json:"cluster"`
	// OperatorNice is -operator-nice: the niceness the operator was started with; each window
	// reports the one it had (steadyResult.OperatorNiceness).
	OperatorNice int `json:"operatorNice"`
	// Workers is how many passes the operator ran at once: -workers, or when that is 0 (the
	// operator's default) the count the operator takes on this machine, by its cores.
	Workers int `json:"workers"`
	// SteadyAgain are the -steady-again variants (g) ran, as given.
	SteadyAgain []steadyAgainVariant `json:"steadyAgain,omitempty"`
	Seconds     float64              `json:"benchSeconds"`
}

type figure struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Target string `json:"target"`
	// OK is nil for a figure without a target.
	OK *bool `json:"ok,omitempty"`
}

func conditionsNow(o options) conditions {
	t := flinksim.Timings{}.Effective()
	load, _ := os.ReadFile("/proc/loadavg")
	commit, _ := exec.Command("git", "describe", "--always", "--dirty").Output()
	return conditions{
		Command:               strings.TrimSpace("go run ./integ/cmd/bench " + strings.Join(os.Args[1:], " ")),
		Date:                  time.Now().UTC().Format(time.RFC3339),
		Commit:                strings.TrimSpace(string(commit)),
		CPUs:                  runtime.NumCPU(),
		LoadAverageStart:      strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "),
		Kubernetes:            localcluster.KubernetesVersion + ", kwok " + localcluster.KwokVersion,
		N:                     o.n,
		SteadySeconds:         o.steady.Seconds(),
		Updates:               o.updates,
		CheckpointRetained:    o.checkpointRetained,
		CheckpointingFraction: o.checkpointingFraction,
		AppsPerNamespace:      o.perNamespace,
		RuntimeEnvironment:    runtimeEnvironment(os.Getenv),
		SteadyAgain:           o.steadyAgain,
		OperatorNice:          o.operatorNice,
		Workers:               (&config.Config{Workers: o.workers}).WorkerCount(),
		SimulatorTimings: map[string]string{
			"initialize": t.Initialize.String(), "schedule": t.Schedule.String(), "savepoint": t.Savepoint.String(),
			"cancel": t.Cancel.String(), "checkpoint": t.Checkpoint.String(),
		},
	}
}

// runtimeEnvironment is the Go runtime's variables that are set, among those that change how the
// operator collects and schedules.
func runtimeEnvironment(getenv func(string) string) map[string]string {
	var set map[string]string
	for _, name := range []string{"GOGC", "GOMEMLIMIT", "GOMAXPROCS", "GODEBUG"} {
		if v := getenv(name); v != "" {
			if set == nil {
				set = map[string]string{}
			}
			set[name] = v
		}
	}
	return set
}

// evaluate fills the figures: issue 12's targets where it sets one, and issue 25's for the soak.
func (r *results) evaluate() {
	r.TargetsMet = true
	if r.Single != nil && r.Scale != nil && r.Steady != nil {
		r.evaluateBench()
	}
	if r.Soak != nil {
		r.evaluateSoak()
	}
}

// add records a figure without a target.
func (r *results) add(name, value, target string) {
	r.Figures = append(r.Figures, figure{Name: name, Value: value, Target: target})
}

// target records a figure against its target.
func (r *results) target(name, value, target string, ok bool) {
	r.Figures = append(r.Figures, figure{Name: name, Value: value, Target: target, OK: &ok})
	r.TargetsMet = r.TargetsMet && ok
}

// evaluateBench is (a) to (d).
func (r *results) evaluateBench() {
	s, sc, st := r.Single, r.Scale, r.Steady
	r.add("(a) one app create → Running", secs(s.Create.Seconds), "—")
	r.add("(a)   of which jobStabilizationPeriod", secs(s.StabilizationSeconds), "—")
	r.add("(a)   overhead beyond simulator + stabilization", secs(s.Create.OverheadSeconds), "—")
	r.add(fmt.Sprintf("(a) parallelism update → Running, median of %d", len(s.Updates)), secs(s.UpdateMedianSeconds), "—")
	r.target("(a)   update overhead beyond simulator, median", secs(s.UpdateOverheadMedian), "≤ 1.00 s", s.UpdateOverheadMedian <= 1)
	r.add("(a)   simulator: savepoint + cancel + job start", secs(s.UpdateSimulatorSeconds), "—")

	r.add(fmt.Sprintf("(b) %d apps at once → all Running", sc.N), secs(sc.OperatorSeconds), "—")
	r.add("(b)   first / median Running", secs(sc.FirstRunningSeconds)+" / "+secs(sc.MedianRunningSeconds), "—")
	if sc.NoFloor {
		r.add("(b) floor: NOT MEASURED (-no-floor)", "—", "—")
	} else if f := sc.FloorFrom; f != nil {
		// Said in the figure's name, so that neither the table nor the JSON's figures pass a floor
		// of another run off as this run's.
		r.add("(b) floor: same Deployments+Services, no operator, NOT MEASURED: taken from "+f.Path, secs(sc.FloorSeconds), "—")
		r.add("(b)   the floor's run", fmt.Sprintf("%s at %s, load %s at its start", f.Date, f.Commit, f.LoadAverageStart), "—")
	} else {
		r.add("(b) floor: same Deployments+Services, no operator", secs(sc.FloorSeconds), "—")
	}
	t := targetsFor(sc.N)
	// Judged as the update target is (issue 29): every job waits jobStabilizationPeriod before it
	// counts as Running, and the floor waits for nothing of the kind; the whole ratio is beside it.
	if sc.NoFloor {
		// Judged as missed, so that a run without its floor never reports every target met.
		r.target("(b) operator / floor, jobStabilizationPeriod left out", "NOT JUDGED (-no-floor)",
			fmt.Sprintf("≤ %.1f×", t.ratio), false)
	} else {
		r.target("(b) operator / floor, jobStabilizationPeriod left out", fmt.Sprintf("%.2f×", sc.RatioWithoutStabilization),
			fmt.Sprintf("≤ %.1f×", t.ratio), sc.RatioWithoutStabilization > 0 && sc.RatioWithoutStabilization <= t.ratio)
		r.add("(b)   with jobStabilizationPeriod", fmt.Sprintf("%.2f×", sc.Ratio), "—")
	}
	if len(sc.Pairs) > 1 {
		r.add(fmt.Sprintf("(b)   each of %d pairs, the median kept", len(sc.Pairs)), pairRatios(sc), "—")
	}
	r.target("(d) RSS after (b)", mem(sc.Memory), t.rssText, sc.Memory.RSSMiB > 0 && sc.Memory.RSSMiB <= t.rssMiB)

	fl := st.Fleet
	r.target("(c) status writes per app per hour", fmt.Sprintf("%.1f", fl.StatusWritesPerAppHour), "≤ 60", fl.StatusWritesPerAppHour <= 60)
	r.target("(c) Flink REST calls per app per minute", fmt.Sprintf("%.2f (busiest app %.2f)", fl.RESTCallsPerAppMinute, fl.MaxRESTCallsPerAppMin),
		"≤ 8", fl.RESTCallsPerAppMinute <= 8)
	r.add("(c) reconcile latency p50 / p90", fmt.Sprintf("%.1f / %.1f ms (%d reconciles)", st.ReconcileP50Milli, st.ReconcileP90Milli, st.Reconciles), "—")
	r.target("(c) reconcile latency p99", fmt.Sprintf("%.1f ms", st.ReconcileP99Milli), "< 50 ms", st.ReconcileP99Milli < 50)
	r.add("(c) Flink call latency p50 / p90 / p99", fmt.Sprintf("%.1f / %.1f / %.1f ms (%d calls)", st.FlinkCallP50Milli, st.FlinkCallP90Milli, st.FlinkCallP99Milli, st.FlinkCalls), "—")
	r.add("(c)   the simulator's time answering them p50 / p90 / p99", fmt.Sprintf("%.1f / %.1f / %.1f ms", st.ServedP50Milli, st.ServedP90Milli, st.ServedP99Milli), "—")
	for _, name := range []string{"needed", "resting"} {
		if w, ok := st.Lanes[name]; ok {
			r.add(fmt.Sprintf("(c) the queue's %s lane: waits past due p50 / p99 (keys taken)", name),
				fmt.Sprintf("%.1f / %.1f ms (%d)", w.P50Ms, w.P99Ms, w.Taken), "—")
		}
	}
	if cr := st.Creates; cr != nil {
		r.add(fmt.Sprintf("(c) %d creates after the window: to the operator's first write p50 / max", cr.Creates),
			fmt.Sprintf("%.0f / %.0f ms", cr.P50Ms, cr.MaxMs), "—")
	}
	r.target("(c) apps not Running at the end", fmt.Sprint(fl.NotRunningAtEnd), "0", fl.NotRunningAtEnd == 0)
	if cp := st.FleetCheckpointing; cp != nil {
		// Issue 29: the idle-write target holds for a fleet of which half checkpoint every 10 s.
		r.target(fmt.Sprintf("(c) the fleet's %d apps checkpointing every 10 s: status writes per app per hour", cp.Apps),
			fmt.Sprintf("%.1f", cp.StatusWritesPerAppHour), "≤ 60", cp.StatusWritesPerAppHour <= 60)
		r.add("(c)   their Flink REST calls per app per minute", fmt.Sprintf("%.2f (busiest app %.2f)", cp.RESTCallsPerAppMinute, cp.MaxRESTCallsPerAppMin), "—")
		r.add("(c)   their writes: most in one second, share of seconds with any", fmt.Sprintf("%d, %.0f%%", cp.MostWritesInASecond, 100*cp.SecondsWithWrites), "—")
		r.target("(c)   of them not Running at the end", fmt.Sprint(cp.NotRunningAtEnd), "0", cp.NotRunningAtEnd == 0)
	}
	if cp := st.Checkpointing; cp != nil {
		// Issue 29: with one checkpoint retained, or none set, at most 60 an hour. A count set to one
		// on purpose asks for every checkpoint to be recorded, and has no target.
		if retained := r.Conditions.CheckpointRetained; retained == 1 {
			r.add(fmt.Sprintf("(c) %d apps checkpointing every 10 s, 1 retained: status writes per app per hour", cp.Apps),
				fmt.Sprintf("%.1f", cp.StatusWritesPerAppHour), "—")
		} else {
			r.target(fmt.Sprintf("(c) %d apps checkpointing every 10 s, retained %s: status writes per app per hour", cp.Apps, retainedLabel(retained)),
				fmt.Sprintf("%.1f", cp.StatusWritesPerAppHour), "≤ 60", cp.StatusWritesPerAppHour <= 60)
		}
		r.add("(c)   their Flink REST calls per app per minute", fmt.Sprintf("%.2f", cp.RESTCallsPerAppMinute), "—")
		r.target("(c)   of them not Running at the end", fmt.Sprint(cp.NotRunningAtEnd), "0", cp.NotRunningAtEnd == 0)
	}
	if api, etcd := st.Processes.cpuPerHour("kube-apiserver"), st.Processes.cpuPerHour("etcd"); api+etcd > 0 {
		r.add("(c) API server + etcd CPU per hour of the steady window", fmt.Sprintf("%.0f + %.0f s", api, etcd), "—")
	}
	if w := st.APIWritesPerSecond; len(w) > 0 {
		r.add("(c) API writes per second: status / checkpoint book (ConfigMap patches) / all",
			fmt.Sprintf("%.2f / %.2f / %.2f", w["PATCH flinkapplications/status"]+w["PUT flinkapplications/status"],
				w["PATCH configmaps"], totalRequests(w)), "—")
	}
	if p := st.PeriodicSavepoints; p != nil {
		r.evaluateSavepoints(p, st.Savepointing, fl)
	}
	r.target("(d) RSS after (c)", mem(st.Memory), t.rssText, st.Memory.RSSMiB > 0 && st.Memory.RSSMiB <= t.rssMiB)
	r.add("(d) the environment's memory after (c)", fmt.Sprintf("%.0f MiB (etcd's data %.0f MiB of it)",
		st.Processes.MemoryMiB, st.Processes.EtcdDataMiB), "—")
	if r.Takeover != nil {
		r.evaluateTakeover(r.Takeover)
	}
}

// benchTargets are the targets (b) and (d) are held to at a size.
type benchTargets struct {
	ratio   float64
	rssMiB  float64
	rssText string
}

// targetsFor is issue 12's targets up to 1,000 applications (the ratio 1.5× up to 100, 2× beyond;
// RSS 150 MiB) and issue 29's for the large fleet: RSS under 1 GiB beyond 1,000 applications, and
// all Running within 1.5× the floor at 10,000 and more.
func targetsFor(n int) benchTargets {
	t := benchTargets{ratio: 2, rssMiB: 150, rssText: "≤ 150 MiB"}
	if n <= 100 || n >= 10000 {
		t.ratio = 1.5
	}
	if n > 1000 {
		t.rssMiB, t.rssText = 1024, "< 1 GiB"
	}
	return t
}

func secs(s float64) string { return fmt.Sprintf("%.2f s", s) }

func mem(m memory) string {
	if m.RSSMiB <= 0 {
		return "unreadable"
	}
	return fmt.Sprintf("%.0f MiB (heap in use %.0f)", m.RSSMiB, m.HeapInuseMiB)
}

func (r *results) print(w io.Writer) {
	if r.Single != nil {
		fmt.Fprintf(w, "\nflinkfsm benchmark, %s, N=%d, steady window %s, %d CPUs (load at start %s), %d workers\n",
			r.Conditions.Commit, r.Conditions.N, time.Duration(r.Conditions.SteadySeconds*float64(time.Second)),
			r.Conditions.CPUs, r.Conditions.LoadAverageStart, r.Conditions.Workers)
	} else {
		fmt.Fprintf(w, "\nflinkfsm soak, %s, %d CPUs (load at start %s)\n", r.Conditions.Commit, r.Conditions.CPUs, r.Conditions.LoadAverageStart)
	}
	if len(r.Conditions.RuntimeEnvironment) > 0 {
		fmt.Fprintf(w, "the operator's Go runtime was set by the environment: %v\n", r.Conditions.RuntimeEnvironment)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tvalue\ttarget\tok?")
	for _, f := range r.Figures {
		ok := ""
		if f.OK != nil {
			ok = map[bool]string{true: "ok", false: "MISSED"}[*f.OK]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Name, f.Value, f.Target, ok)
	}
	_ = tw.Flush()
	if len(r.SteadyAgain) > 0 {
		printSteadyAgain(w, r.Steady, r.SteadyAgain)
	}
	if st := r.Steady; st != nil {
		for _, g := range []struct {
			name string
			f    *groupFigures
		}{{"the fleet", &st.Fleet}, {"the fleet's checkpointing apps", st.FleetCheckpointing}, {"the checkpointing apps", st.Checkpointing},
			{"the savepointing apps", st.Savepointing}} {
			if g.f == nil {
				continue
			}
			fmt.Fprintf(w, "\n(c) %s: status fields changed by its %d writes: %v\n", g.name, g.f.StatusWrites, g.f.WrittenFields)
			fmt.Fprintf(w, "(c) %s: REST calls per app per minute by endpoint: %v\n", g.name, g.f.RESTCallsByEndpoint)
		}
		if p := st.PeriodicSavepoints; p != nil {
			p.print(w)
		}
		fmt.Fprintf(w, "\n(c) the environment over the %.0f s window: %s\n", st.Processes.WindowSeconds, st.Processes)
	}
	if r.Takeover != nil {
		r.Takeover.print(w)
	}
	if sc := r.Scale; sc != nil {
		if f := sc.FloorFrom; f != nil {
			fmt.Fprintf(w, "\n(b) the floor was not measured in this run: its %.2f s and every floor figure below are from %s\n"+
				"  (measured %s at %s: %s)\n", f.FloorSeconds, f.Path, f.Date, f.Commit, f.Command)
		}
		fmt.Fprintf(w, "\n(b) when the %d applications entered each phase (s since the first create; floor %.2f s):\n", sc.N, sc.FloorSeconds)
		phases := make([]string, 0, len(sc.PhaseEntered))
		for p := range sc.PhaseEntered {
			phases = append(phases, p)
		}
		sort.Slice(phases, func(i, j int) bool { return sc.PhaseEntered[phases[i]].Median < sc.PhaseEntered[phases[j]].Median })
		for _, p := range phases {
			fmt.Fprintf(w, "  %-16s median %6.2f  last %6.2f\n", p, sc.PhaseEntered[p].Median, sc.PhaseEntered[p].Last)
		}
		fmt.Fprintf(w, "\n(b) API server requests per application, everyone's (floor %.1f, operator's run %.1f):\n",
			totalRequests(sc.FloorRequests), totalRequests(sc.OperatorRequests))
		fmt.Fprintf(w, "  floor:          %s\n", formatRequests(sc.FloorRequests))
		fmt.Fprintf(w, "  operator's run: %s\n", formatRequests(sc.OperatorRequests))
		fmt.Fprintln(w, "(b) CPU seconds spent by each process of the machine:")
		fmt.Fprintf(w, "  floor:          %s\n", formatCPU(sc.FloorCPU))
		fmt.Fprintf(w, "  operator's run: %s\n", formatCPU(sc.OperatorCPU))
		fmt.Fprintf(w, "(b) the operator's requests to the API server in its run, count × mean latency:\n  %s\n",
			describeRequestTimes(sc.OperatorKubeRequests))
		fmt.Fprintf(w, "(b) the environment at the end of each run, and the CPU it spent in it:\n  floor:          %s\n  operator's run: %s\n",
			sc.FloorProcesses, sc.OperatorProcesses)
	}
	if r.Soak != nil {
		r.Soak.print(w)
	}
	if r.Single == nil {
		return
	}
	fmt.Fprintln(w, "\n(a) phases of the median update:")
	if u := medianUpdate(r.Single); u != nil {
		for _, p := range u.Phases {
			fmt.Fprintf(w, "  %-16s %6.2f s\n", p.Phase, p.Seconds)
		}
		fmt.Fprintf(w, "  simulator observed: %v\n", u.SimulatorObserved)
	}
}

// medianUpdate is the update whose overhead is the median one (the lower of the two middle ones).
func medianUpdate(s *singleResult) *transition {
	if s == nil || len(s.Updates) == 0 {
		return nil
	}
	best := &s.Updates[0]
	for i := range s.Updates {
		u := &s.Updates[i]
		if abs(u.OverheadSeconds-s.UpdateOverheadMedian) < abs(best.OverheadSeconds-s.UpdateOverheadMedian) {
			best = u
		}
	}
	return best
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func (r *results) write(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("\nresults written to %s\n", path)
	return nil
}

// retainedLabel names a checkpoint retention for the report: the count, or that none is set.
func retainedLabel(n int) string {
	if n == 0 {
		return "none set"
	}
	return strconv.Itoa(n)
}
