// Command bench is `make bench`: issue 12's benchmark of the operator on the local cluster (see
// integ/localenv) with the Flink simulator at its default timings. It measures, in one run:
//
//	(a) one application created → Running, and parallelism updates → Running, split by phase and
//	    set against the simulator's own durations;
//	(b) N applications created at once → all Running, against the floor: the same Deployments and
//	    Services applied without the operator; both alternately, three pairs up to 200 applications,
//	    the pair with the median ratio reported (-floor-from takes the floor from an earlier run's
//	    results of the same size instead, and runs the operator's run alone);
//	(c) the steady state of those N applications: status writes, Flink REST calls, reconcile latency;
//	    beside them, a few applications that checkpoint, and a tenth of N more that take periodic
//	    savepoints, with what each savepoint costs in writes of its owner and of its FlinkSnapshot;
//	(d) the operator's resident memory after (b) and after (c);
//	(e) the soak of issue 25: N ordinary applications alone, then beside thirteen hostile tenants (huge,
//	    deeply nested and slow-drip JobManager answers, a JobManager that never answers, a 200 MiB
//	    jar, a redirect loop, jar hosts that stall or drip); the ratio of their all-Running times,
//	    the operator's peak memory and its restarts. -soak-only runs only (e) (`make bench-soak`);
//	(f) issue 29's quiet takeover, after (c): the operator killed with those applications Running
//	    and a new one started; its status writes and Flink calls in its first statusPollInterval,
//	    and the time until it had observed every application again (-takeover=false leaves it out).
//
// Reconcile latency at 10,000 applications differs more between two runs than between two settings
// of the operator, so -steady-again NAME[:KEY=VALUE,...] (repeatable) measures settings side by side
// on the same fleet: (g), after (f) (or (c)), each variant in turn restarts the operator with KEY=VALUE
// added to its environment (GOGC=100) and, for binary=PATH, another operator binary (an older build),
// waits until it has observed every application again and measures a window as (c) does; then the
// usual operator is started again. A variant without KEY=VALUE is the usual operator, the control.
//
// It prints a table against the targets and writes every figure, with the conditions they
// were measured under, as JSON. It is not a test: its figures depend on the machine and its load.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

type options struct {
	n      int
	steady time.Duration
	settle time.Duration
	// createProbe is how many applications (c) creates one at a time after its window (creates.go).
	createProbe   int
	updates       int
	out           string
	dir           string
	timeout       time.Duration
	stabilization time.Duration
	workers       int
	checkpointing int
	// checkpointRetained is the checkpointing applications' state.checkpoints.num-retained; 0 sets
	// none, and the operator's clusters keep enough for a record a minute.
	checkpointRetained int
	// checkpointingFraction is the share of the -n applications of (b) that checkpoint every 10 s
	// (issue 29: half of 10,000), measured in (c) as a group of their own.
	checkpointingFraction float64
	// perNamespace is how many of (b)'s applications share a namespace.
	perNamespace int
	// sizeFor is how many applications the local cluster is sized for; 0: as many as the run
	// has at once.
	sizeFor       int
	pairs         int
	set           setFlag
	soak          bool
	soakOnly      bool
	soakN         int
	soakPairs     int
	soakHeadStart time.Duration
	soakHold      time.Duration
	soakJarMiB    int64
	soakTenants   string

	// savepointing is the share of -n that the group with periodic savepoints has (its own
	// applications, beside the fleet), each taking one every savepointInterval and keeping
	// savepointKeep savepoint FlinkSnapshots (0: the operator's default).
	savepointing      float64
	savepointInterval int
	savepointKeep     int

	// takeover runs (f) after (c), the operator down for takeoverOutage.
	takeover       bool
	takeoverOutage time.Duration

	// floorFrom is an earlier run's results file whose floor (b) takes instead of measuring one;
	// takenFloor is that floor, read and checked against this run's size before the run starts.
	floorFrom  string
	takenFloor *takenFloor
	// noFloor skips (b)'s floor altogether: the operator's run alone, its ratio not judged. At
	// 10,000 applications the floor and its deletion take 90 minutes, and the figures of (c), (d)
	// and (f) do not depend on it.
	noFloor bool

	// steadyAgain are the variants of (g), in the order given (steady_again.go).
	steadyAgain steadyAgainFlag
	// operatorNice is the operator's niceness (-operator-nice).
	operatorNice int
}

// setFlag collects -set key=value: operator config keys changed for an experiment, recorded with
// the results like every other condition.
type setFlag map[string]string

func (s setFlag) String() string { return fmt.Sprint(map[string]string(s)) }

func (s setFlag) Set(v string) error {
	key, value, ok := strings.Cut(v, "=")
	if !ok || key == "" {
		return fmt.Errorf("want key=value, not %q", v)
	}
	s[key] = value
	return nil
}

func main() {
	o := options{set: setFlag{}}
	flag.IntVar(&o.n, "n", 100, "applications created at once in (b) and measured in (c)")
	flag.DurationVar(&o.steady, "steady", 3*time.Minute, "length of the steady-state window (c)")
	flag.DurationVar(&o.settle, "settle", 30*time.Second, "wait between all Running and the steady-state window")
	flag.IntVar(&o.createProbe, "create-probe", 5, "after (c)'s window, create this many applications one at a time and time the operator's first write to each (0: none)")
	flag.IntVar(&o.updates, "updates", 5, "parallelism updates of the single application (a); the overhead is their median")
	flag.StringVar(&o.out, "out", "bench-results.json", "where to write the JSON results")
	flag.StringVar(&o.dir, "dir", "", "directory for the environment's state and logs (default: a new temp dir, removed after a clean run)")
	flag.DurationVar(&o.timeout, "timeout", 0, "bound on each wait (default: 15 minutes, or 0.3 s per application of -n where that is more)")
	// The harness's 2 s (integ/localenv, the e2e suite), under which issue 12 measured; the
	// operator's own default is 10 s. Either way it is reported apart from the overhead.
	flag.DurationVar(&o.stabilization, "stabilization", 2*time.Second, "the operator's jobStabilizationPeriod")
	flag.IntVar(&o.checkpointing, "checkpointing-apps", 10, "applications checkpointing every 10 s measured beside the fleet in (c); 0 for none")
	flag.IntVar(&o.checkpointRetained, "checkpoint-retained", 0, "the checkpointing applications' state.checkpoints.num-retained (0: none set, and the operator keeps enough; 1: Flink's default, every checkpoint recorded)")
	flag.Float64Var(&o.checkpointingFraction, "checkpointing-fraction", 0, "share of the -n applications of (b) that checkpoint every 10 s (every other one for 0.5), measured in (c) apart from the rest; 0 for none")
	flag.Float64Var(&o.savepointing, "savepointing-fraction", 0.1, "applications with periodic savepoints measured beside the fleet in (c), as a fraction of -n (at least one); 0 for none")
	flag.IntVar(&o.savepointInterval, "savepoint-interval-seconds", 600, "their spec.periodicSavepoint.intervalSeconds (at least 60); (c) measures them for at least that long")
	flag.IntVar(&o.savepointKeep, "savepoint-keep", 0, "their spec.savepointRetention.keep, which a short window reaches only when small (0: the operator's default)")
	flag.IntVar(&o.workers, "workers", config.Default().Workers, "the operator's workers (default: the operator's default, 0: 6 a core, 12 to 32)")
	flag.IntVar(&o.perNamespace, "apps-per-namespace", 1000, "applications of (b) in each namespace: the fleet and the floor fill bench-apps, bench-apps-1, ... (bench-floor, ...) with this many each")
	flag.IntVar(&o.sizeFor, "size-for", 0, "applications the local cluster is sized for (localcluster.Sizing), e.g. 10000 to run a smaller N on the cluster of N=10000 (default: as many as the run has at once)")
	flag.StringVar(&o.floorFrom, "floor-from", "", "take (b)'s floor from this earlier run's JSON results (its -out) instead of measuring it, and run only the operator's run against it; refused unless that run had this one's N, -checkpointing-fraction, -apps-per-namespace, cluster sizing, Kubernetes and CPUs")
	flag.BoolVar(&o.noFloor, "no-floor", false, "measure no floor in (b): run only the operator's run, and leave the ratio to the floor unjudged (the run then meets no all-Running target); for figures of (c), (d) and (f) that do not depend on it")
	flag.IntVar(&o.pairs, "pairs", 0, "floor and operator runs (b) alternates, keeping the median ratio (default: 3 up to 200 applications, else 1)")
	// The local cluster's processes and the simulator stand in for machines of their own (the
	// control plane's nodes, the JobManagers' pods); here they share two cores with the operator,
	// and the Go collectors of the API server (2 GiB live at 10,000 applications) and of the
	// simulator put idle workers on every core for seconds at a time (golang/go#17969). On a
	// busy node a pod's CPU request sets its weight: -5 weighs the operator three times as much as
	// the rest, to tell how much of a latency is that sharing. 0, as much, is what the figures are.
	flag.IntVar(&o.operatorNice, "operator-nice", 0, "the operator process's niceness: -5 gives it three times the CPU weight of the local cluster's processes and the simulator (as a CPU request would on a busy node), 0 the same; lowering it takes root, without which it stays 0 (each window reports it)")
	flag.Var(o.set, "set", "operator config key=value (repeatable), e.g. -set kubeAPIQPS=400")
	flag.BoolVar(&o.takeover, "takeover", true, "run the takeover (f) after (c): kill the operator with the applications Running and start a new one")
	// A standby replica waits out the lease (15 s by default) before it takes over.
	flag.DurationVar(&o.takeoverOutage, "takeover-outage", 15*time.Second, "how long the operator is down in (f)")
	flag.Var(&o.steadyAgain, "steady-again", "after (f), or (c) with -takeover=false, restart the operator as NAME[:KEY=VALUE,...] "+
		"and measure the steady state again, as (c) does (repeatable, in order); KEY=VALUE is added to the operator's "+
		"environment (GOGC=100; values cannot hold a comma), config.KEY=VALUE changes a key of its config "+
		"(config.workers=12), nice=N runs it at that niceness instead of -operator-nice's, binary=PATH runs that operator binary instead; "+
		"with no KEY=VALUE, the usual operator (a control)")
	flag.BoolVar(&o.soak, "soak", true, "run the soak (e) after (c): ordinary applications alone and beside hostile tenants")
	flag.BoolVar(&o.soakOnly, "soak-only", false, "run only the soak (e), not (a) to (c)")
	flag.IntVar(&o.soakN, "soak-n", 0, "ordinary applications in each run of the soak (default: -n)")
	flag.IntVar(&o.soakPairs, "soak-pairs", 0, "baseline and soak runs the soak alternates, keeping the median ratio (default: 3 up to 200 applications, else 1)")
	flag.DurationVar(&o.soakHeadStart, "soak-head-start", 30*time.Second, "how long the hostile tenants run before the ordinary applications are created")
	flag.DurationVar(&o.soakHold, "soak-hold", 2*time.Minute, "how long the last soak run goes on after every ordinary application runs")
	flag.Int64Var(&o.soakJarMiB, "soak-jar-mib", 200, "size of the large jar a hostile session job fetches, in MiB")
	flag.StringVar(&o.soakTenants, "soak-tenants", "", "hostile tenants of the soak, comma-separated (default: all thirteen; none: none, which measures the noise between two alike runs)")
	flag.Parse()
	if o.savepointing > 0 && o.savepointInterval < 60 {
		fmt.Fprintln(os.Stderr, "bench: -savepoint-interval-seconds must be at least 60, the API's minimum")
		os.Exit(2)
	}
	if o.checkpointingFraction < 0 || o.checkpointingFraction > 1 {
		fmt.Fprintln(os.Stderr, "bench: -checkpointing-fraction must be between 0 and 1")
		os.Exit(2)
	}
	if o.soakOnly && len(o.steadyAgain) > 0 {
		fmt.Fprintln(os.Stderr, "bench: -steady-again measures (c)'s applications again: not with -soak-only")
		os.Exit(2)
	}
	if o.timeout <= 0 {
		o.timeout = defaultTimeout(o.n)
	}
	if o.perNamespace <= 0 {
		o.perNamespace = o.n
	}
	if o.noFloor && (o.floorFrom != "" || o.soakOnly || o.pairs > 1) {
		fmt.Fprintln(os.Stderr, "bench: -no-floor is for (b), one run: not with -floor-from, -soak-only or -pairs above 1")
		os.Exit(2)
	}
	if o.noFloor {
		o.pairs = 1
	}
	if o.floorFrom != "" {
		// One floor, so one pair: more would repeat the operator's run against the same figure.
		if o.soakOnly || o.pairs > 1 {
			fmt.Fprintln(os.Stderr, "bench: -floor-from is for (b), one pair: not with -soak-only or -pairs above 1")
			os.Exit(2)
		}
		o.pairs = 1
	}
	if o.pairs <= 0 {
		o.pairs = defaultPairs(o.n)
	}
	if o.soakN <= 0 {
		o.soakN = o.n
	}
	if o.soakPairs <= 0 {
		o.soakPairs = defaultPairs(o.soakN)
	}
	if o.floorFrom != "" {
		// Before the environment starts: a floor of another size is refused in seconds, not after it.
		var err error
		if o.takenFloor, err = loadFloor(o.floorFrom, o); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type bench struct {
	env  *localenv.Env
	kube kubernetes.Interface
	apps versioned.Interface
	rec  *recorder
	// addrMu guards metricsAddr, the running operator's /metrics address: the soak starts the
	// operator again from another goroutine if it ends, and the new process binds another port.
	addrMu        sync.Mutex
	metricsAddr   string
	stabilization time.Duration
	timeout       time.Duration
	began         time.Time
	// checkpointingFraction is the share of (b)'s applications that checkpoint (see checkpoints).
	checkpointingFraction float64
	// perNamespace is how many of (b)'s applications share a namespace (see fleetNamespace).
	perNamespace int
	// profiling is whether the operator serves pprof (-set profiling=true), and (c) saves its CPU
	// profile into dir, the run's directory.
	profiling bool
	dir       string
	// keepFloor, when set, is told each floor (b) measures as soon as it has it (floorFile).
	keepFloor func(n int, f floorRun)
	// profileTag, when set, names the -steady-again variant being measured, in its profiles' file
	// names (profileName); "" during (c).
	profileTag string
}

func (b *bench) metricsAddress() string {
	b.addrMu.Lock()
	defer b.addrMu.Unlock()
	return b.metricsAddr
}

func (b *bench) setMetricsAddress(addr string) {
	b.addrMu.Lock()
	defer b.addrMu.Unlock()
	b.metricsAddr = addr
}

func (b *bench) logf(format string, args ...any) {
	fmt.Printf("[bench %6.1fs] %s\n", time.Since(b.began).Seconds(), fmt.Sprintf(format, args...))
}

func run(o options) (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	res := &results{Conditions: conditionsNow(o)}
	b := &bench{stabilization: o.stabilization, timeout: o.timeout, began: time.Now(), rec: newRecorder(),
		checkpointingFraction: o.checkpointingFraction, perNamespace: o.perNamespace}

	keep := o.dir != ""
	if o.dir == "" {
		if o.dir, err = os.MkdirTemp("", "flinkfsm-bench-"); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(o.dir, "localenv.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	b.logf("starting the local environment in %s (operator log: %s)", o.dir, filepath.Join(o.dir, "env", "logs", "operator.log"))
	defaults := config.Default()
	operatorConfig := map[string]string{
		// Issue 12's measuring conditions: the harness's intervals, except the status poll at the
		// operator's default of 10 s; throughput settings at the operator's defaults.
		"statusPollInterval":     "10s",
		"jobStabilizationPeriod": o.stabilization.String(),
		"workers":                strconv.Itoa(o.workers),
		// Deadlines at the operator's defaults too: the harness shortens them so that tests of
		// clusters that never start end quickly, but 1,000 clusters created at once take Kubernetes
		// alone more than two minutes to start (the floor), and a benchmark of the operator must not
		// fail clusters that Kubernetes is still starting.
		"clusterStartTimeout": defaults.ClusterStartTimeout.String(),
		"readinessTimeout":    defaults.ReadinessTimeout.String(),
		"savepointTimeout":    defaults.SavepointTimeout.String(),
		"cancelTimeout":       defaults.CancelTimeout.String(),
	}
	for k, v := range o.set {
		operatorConfig[k] = v
	}
	res.Conditions.OperatorConfig = operatorConfig
	b.profiling, b.dir = operatorConfig["profiling"] == "true", o.dir
	b.env, err = localenv.Start(ctx, localenv.Options{Dir: filepath.Join(o.dir, "env"), Log: logFile,
		OperatorConfig: operatorConfig, Applications: max(o.sizeFor, applicationsAtOnce(o)), OperatorNice: o.operatorNice})
	if err != nil {
		return fmt.Errorf("starting the environment (log %s): %w", logFile.Name(), err)
	}
	res.Conditions.Cluster = b.env.Cluster.Sizing()
	defer func() {
		b.env.Stop()
		if err == nil && !keep {
			_ = os.RemoveAll(o.dir)
		} else {
			fmt.Printf("environment state and logs kept in %s\n", o.dir)
		}
	}()
	if o.takenFloor != nil {
		if err := o.takenFloor.sameCluster(res.Conditions.Cluster); err != nil {
			return err
		}
	}
	cfg := b.env.Cluster.RestConfig()
	// The benchmark's own client must not be what limits "applied at once".
	cfg.QPS, cfg.Burst = 5000, 10000
	if b.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if b.apps, err = versioned.NewForConfig(cfg); err != nil {
		return err
	}
	addr, err := b.env.MetricsAddress(ctx)
	if err != nil {
		return err
	}
	b.setMetricsAddress(addr)
	// The watch ends before the environment stops, rather than complaining that it went away.
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := b.rec.run(watchCtx, b.apps); err != nil {
		return err
	}
	b.logf("environment up; operator metrics at %s", addr)

	if !o.soakOnly {
		if err := b.benchmark(ctx, o, res); err != nil {
			return err
		}
	}
	if o.soak || o.soakOnly {
		if res.Soak, err = b.soak(ctx, soakOptions{n: o.soakN, pairs: o.soakPairs, headStart: o.soakHeadStart,
			hold: o.soakHold, largeJar: o.soakJarMiB << 20, tenants: o.soakTenants}); err != nil {
			return err
		}
	}
	res.Conditions.Seconds = time.Since(b.began).Seconds()
	res.evaluate()
	res.print(os.Stdout)
	return res.write(o.out)
}

// benchmark is (a) to (d). It leaves nothing of (b) and (c) behind when the soak follows, so that
// the soak starts on a cluster as empty as (b)'s.
func (b *bench) benchmark(ctx context.Context, o options, res *results) (err error) {
	if res.Single, err = b.single(ctx, o.updates); err != nil {
		return fmt.Errorf("(a): %w", err)
	}
	b.keepFloor = func(n int, f floorRun) {
		path := floorFile(o.out)
		if err := writeFloor(path, res.Conditions, n, f); err != nil {
			b.logf("(b) the floor could not be kept in %s: %v", path, err)
			return
		}
		b.logf("(b) floor kept in %s for -floor-from", path)
	}
	scale, keys, err := b.scale(ctx, o.n, o.pairs, o.takenFloor, o.noFloor)
	if err != nil {
		return fmt.Errorf("(b): %w", err)
	}
	res.Scale = scale
	fleet, fleetCheckpointing := splitFleet(keys, o.checkpointingFraction)
	var checkpointing *group
	if o.checkpointing > 0 {
		if checkpointing, err = b.checkpointingApps(ctx, o.checkpointing, o.checkpointRetained); err != nil {
			return fmt.Errorf("(c) checkpointing applications: %w", err)
		}
	}
	var sp *savepointing
	if k := savepointingGroupSize(o.n, o.savepointing); k > 0 {
		if sp, err = b.savepointingApps(ctx, k, time.Duration(o.savepointInterval)*time.Second, int32(o.savepointKeep)); err != nil {
			return fmt.Errorf("(c) savepointing applications: %w", err)
		}
	}
	if res.Steady, err = b.steady(ctx, fleet, fleetCheckpointing, checkpointing, sp, o.settle, o.steady); err != nil {
		return fmt.Errorf("(c): %w", err)
	}
	if o.createProbe > 0 {
		if res.Steady.Creates, err = b.probeCreates(ctx, o.createProbe); err != nil {
			return fmt.Errorf("(c) creates: %w", err)
		}
	}
	groups := map[string]group{"fleet": fleet}
	if fleetCheckpointing != nil {
		groups["fleet checkpointing"] = *fleetCheckpointing
	}
	if checkpointing != nil {
		groups["checkpointing"] = *checkpointing
	}
	if sp != nil {
		groups["savepointing"] = sp.group
	}
	if o.takeover {
		poll, err := time.ParseDuration(res.Conditions.OperatorConfig["statusPollInterval"])
		if err != nil {
			return fmt.Errorf("(f): statusPollInterval: %w", err)
		}
		windows := map[string]recordWindow{}
		if fleetCheckpointing != nil {
			windows["fleet checkpointing"] = recordWindowOf(res.Conditions.OperatorConfig, 0)
		}
		if checkpointing != nil {
			windows["checkpointing"] = recordWindowOf(res.Conditions.OperatorConfig, o.checkpointRetained)
		}
		if res.Takeover, err = b.takeover(ctx, o.takeoverOutage, poll, groups, windows); err != nil {
			return fmt.Errorf("(f): %w", err)
		}
	}
	if len(o.steadyAgain) > 0 {
		var every []string
		for _, g := range groups {
			every = append(every, g.keys...)
		}
		if res.SteadyAgain, err = b.steadyAgain(ctx, o, every, fleet, fleetCheckpointing); err != nil {
			return fmt.Errorf("(g): %w", err)
		}
	}
	if !o.soak {
		return nil
	}
	b.logf("deleting (b)'s and (c)'s applications before the soak")
	if err := b.deleteFleet(ctx, keys); err != nil {
		return err
	}
	if checkpointing != nil {
		if err := b.deleteFleet(ctx, checkpointing.keys); err != nil {
			return err
		}
	}
	if sp != nil {
		return b.deleteFleet(ctx, sp.keys)
	}
	return nil
}

// defaultTimeout bounds each wait: 15 minutes, or 0.3 s per application where that is more. At
// 1,000 applications the floor took 110 to 180 s and the operator's run 130 to 150 s; a wait for
// 10,000 (the floor, the fleet Running, a namespace of them deleted) takes minutes of its own.
func defaultTimeout(n int) time.Duration {
	return max(15*time.Minute, time.Duration(n)*300*time.Millisecond)
}

// applicationsAtOnce is how many applications the run has on the cluster at once, which the
// cluster is sized for: (b)'s fleet with (c)'s groups and (a)'s one, or the soak's ordinary
// applications and its ten tenants ((b) and (c) are deleted before the soak).
func applicationsAtOnce(o options) int {
	soak := 0
	if o.soak || o.soakOnly {
		soak = o.soakN + 10
	}
	if o.soakOnly {
		return soak
	}
	return max(soak, 1+o.n+o.checkpointing+savepointingGroupSize(o.n, o.savepointing))
}

// checkpoints tells whether (b)'s i-th application checkpoints: a share of fraction of them,
// spread evenly (every other one for 0.5), so that both kinds are created side by side.
func checkpoints(i int, fraction float64) bool {
	return fraction > 0 && math.Floor(float64(i+1)*fraction) > math.Floor(float64(i)*fraction)
}

// checkpointEvery is (b)'s i-th application's checkpoint interval for benchApp: "10s" for those
// that checkpoint, "" for the rest.
func (b *bench) checkpointEvery(i int) string {
	if checkpoints(i, b.checkpointingFraction) {
		return "10s"
	}
	return ""
}

// splitFleet divides (b)'s applications, in their creation order, into those that do not
// checkpoint and, when some do, those that do; both live in the fleet's namespaces.
func splitFleet(keys []string, fraction float64) (idle group, checkpointing *group) {
	for i, k := range keys {
		if checkpoints(i, fraction) {
			if checkpointing == nil {
				checkpointing = &group{}
			}
			checkpointing.keys = append(checkpointing.keys, k)
		} else {
			idle.keys = append(idle.keys, k)
		}
	}
	if checkpointing != nil {
		idle.shared, checkpointing.shared = true, true
	}
	return idle, checkpointing
}

// savepointingGroupSize is how many applications of the group with periodic savepoints go with n
// applications: the fraction of n, at least one unless the fraction is 0.
func savepointingGroupSize(n int, fraction float64) int {
	if fraction <= 0 || n <= 0 {
		return 0
	}
	return max(1, int(math.Round(float64(n)*fraction)))
}

// benchApp is the application every measurement uses: the e2e suite's (the wordcount job, small
// pods, parallelism 3 on TaskManagers of 2 slots, Flink's defaults otherwise: no checkpoints).
// checkpointEvery, when set, turns periodic checkpoints on, as examples/wordcount.yaml does.
func benchApp(ns, name string, parallelism int32, checkpointEvery string) *v1beta1.FlinkApplication {
	flinkConfig := v1beta1.FlinkConfig{
		"state.savepoints.dir":  "file:///flink/savepoints",
		"state.checkpoints.dir": "file:///flink/checkpoints",
	}
	if checkpointEvery != "" {
		flinkConfig["execution.checkpointing.interval"] = checkpointEvery
	}
	small := &corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}
	slots := int32(2)
	return &v1beta1.FlinkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1beta1.FlinkApplicationSpec{
			ClusterSpec: v1beta1.ClusterSpec{
				Image:            "flinkfsm.test/wordcount:v1",
				FlinkVersion:     "1.20",
				FlinkConfig:      flinkConfig,
				JobManagerConfig: v1beta1.JobManagerConfig{Resources: small},
			},
			TaskManagerConfig: v1beta1.TaskManagerConfig{Resources: small, TaskSlots: &slots},
			JarName:           "wordcount.jar",
			EntryClass:        "org.apache.flink.WordCount",
			Parallelism:       parallelism,
			DeleteMode:        v1beta1.DeleteModeForceCancel,
		},
	}
}
