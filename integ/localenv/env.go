// Package localenv runs flinkfsm for real on a local machine: a local Kubernetes control plane
// (integ/localcluster), a Flink JobManager simulator per Flink cluster (integ/flinksim), and the
// operator binary as its own process, so tests can kill it and start it again. `make cluster-up`,
// `make demo`, `make bench` and the integration suite all use it.
package localenv

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/integ/localcluster"
	"github.com/flinkfsm/flinkfsm/internal/repo"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
)

// RaceEnv, set to 1, builds the operator with the race detector; a race it finds is in its log as
// "WARNING: DATA RACE".
const RaceEnv = "FLINKFSM_RACE"

// Options configures a local environment.
type Options struct {
	// Dir holds the cluster's state, the operator's config and every log; default a new temp dir.
	Dir string
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// Timings are the simulated Flink's; zero values keep the simulator's defaults.
	Timings flinksim.Timings
	// OperatorConfig is extra YAML under the operator section, one "key: value" per line, overriding
	// the defaults written here (short intervals suited to a local cluster).
	OperatorConfig map[string]string
	// Applications is how many FlinkApplications the cluster is sized for (localcluster.Sizing);
	// 0 is localcluster.SizedForApplications, enough for the tests.
	Applications int
	// OperatorNice is the operator process's niceness (nice(1)); 0 runs it as the cluster's
	// processes and the simulator run. A negative value (root only) gives it a larger share of
	// a busy machine, as a pod's CPU request gives it on a busy node.
	OperatorNice int
	// OperatorEnv is added to the environment of every operator process this Env starts
	// ("KUBE_CACHE_MUTATION_DETECTOR=true"); a variant's own (StartOperatorVariant) comes after it.
	OperatorEnv []string
	// Flink, when set, serves the JobManagers in place of the simulator (Env.Fleet is then nil):
	// it is given the cluster's client and kubeconfig, runs until the environment stops, and serves
	// each cluster's REST API at /{namespace}/{service}/, where the operator's URL template points.
	Flink func(kube kubernetes.Interface, kubeconfig string) FlinkFleet
}

// FlinkFleet runs Flink for the clusters the operator creates (integ/realflink's Fleet).
type FlinkFleet interface {
	http.Handler
	// Run follows the cluster's pods until ctx ends; it returns once it is following them.
	Run(ctx context.Context) error
}

// Env is a running local environment.
type Env struct {
	Dir      string
	Cluster  *localcluster.Cluster
	Fleet    *flinksim.Fleet
	Kube     kubernetes.Interface
	Apps     versioned.Interface
	FlinkURL string

	log            io.Writer
	root           string
	binary         string
	configPath     string
	operatorConfig map[string]string
	cancel         context.CancelFunc
	// nice is the niceness the next operator process starts with (Options.OperatorNice).
	nice int
	// operatorEnv is Options.OperatorEnv.
	operatorEnv []string

	mu       sync.Mutex
	operator *exec.Cmd
	exited   chan struct{}
	// logStart is where the running operator's output begins in operator.log.
	logStart int64
}

// Start brings everything up: the cluster, the CRD, the simulator fleet and the operator.
func Start(ctx context.Context, opts Options) (_ *Env, err error) {
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		if opts.Dir, err = os.MkdirTemp("", "flinkfsm-env-"); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(opts.Dir, "logs"), 0o755); err != nil {
		return nil, err
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	e := &Env{Dir: opts.Dir, log: log, root: root, operatorConfig: opts.OperatorConfig,
		nice: opts.OperatorNice, operatorEnv: opts.OperatorEnv}
	defer func() {
		if err != nil {
			e.Stop()
		}
	}()
	e.logf("building the operator")
	e.binary = filepath.Join(opts.Dir, "bin", "flinkfsm")
	args := []string{"build", "-o", e.binary}
	if os.Getenv(RaceEnv) == "1" {
		// The race detector sees only the interleavings a run produces; the suites produce the
		// operator's busiest ones (many applications, faults, a killed process).
		args = append(args, "-race")
	}
	build := exec.CommandContext(ctx, "go", append(args, "./cmd/flinkfsm")...)
	build.Dir, build.Stdout, build.Stderr = root, log, log
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("building the operator: %w", err)
	}

	e.Cluster, err = localcluster.Start(ctx, localcluster.Options{Dir: filepath.Join(opts.Dir, "cluster"), Log: log,
		Applications: opts.Applications})
	if err != nil {
		return nil, err
	}
	cfg := e.Cluster.RestConfig()
	if e.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if e.Apps, err = versioned.NewForConfig(cfg); err != nil {
		return nil, err
	}
	e.logf("installing the FlinkApplication CRD")
	if _, stderr, err := e.Cluster.Kubectl(ctx, "apply", "--server-side", "-f", filepath.Join(root, "deploy/crd")); err != nil {
		return nil, fmt.Errorf("installing the CRD: %v: %s", err, stderr)
	}
	if err := e.waitForCRD(ctx); err != nil {
		return nil, err
	}
	e.logf("installing the pod security policy")
	if _, stderr, err := e.Cluster.Kubectl(ctx, "apply", "--server-side", "-f", filepath.Join(root, "deploy/policy.yaml")); err != nil {
		return nil, fmt.Errorf("installing the pod security policy: %v: %s", err, stderr)
	}
	if err := e.waitForPolicy(ctx); err != nil {
		return nil, err
	}

	runCtx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	if opts.Flink != nil {
		fleet := opts.Flink(e.Kube, e.Cluster.KubeconfigPath)
		if err := fleet.Run(runCtx); err != nil {
			return nil, err
		}
		if e.FlinkURL, err = serve(runCtx, fleet); err != nil {
			return nil, err
		}
		e.logf("real Flink serving JobManagers at %s", e.FlinkURL)
		return e, e.startOperatorWithConfig(opts)
	}
	e.Fleet = flinksim.NewFleet(e.Kube, flinksim.FleetOptions{Timings: opts.Timings,
		Logf: func(f string, a ...any) { e.logf("flinksim: "+f, a...) }})
	go func() { _ = e.Fleet.Run(runCtx) }()
	addr, err := flinksim.ListenAndServe(runCtx, "127.0.0.1:0", e.Fleet)
	if err != nil {
		return nil, err
	}
	e.FlinkURL = "http://" + addr
	e.logf("Flink simulator serving JobManagers at %s", e.FlinkURL)

	return e, e.startOperatorWithConfig(opts)
}

// startOperatorWithConfig writes the operator's config, pointed at e.FlinkURL, and starts it.
func (e *Env) startOperatorWithConfig(opts Options) error {
	e.configPath = filepath.Join(opts.Dir, "operator.yaml")
	if err := os.WriteFile(e.configPath, []byte(operatorConfig(e.FlinkURL, opts.OperatorConfig)), 0o644); err != nil {
		return err
	}
	return e.StartOperator()
}

// serve serves h on a loopback port until ctx ends, and returns its URL.
func serve(ctx context.Context, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return "http://" + ln.Addr().String(), nil
}

// operatorConfig is the operator's config file: Flink reached through the simulator's URL template,
// and intervals short enough that a local run takes seconds.
func operatorConfig(flinkURL string, extra map[string]string) string {
	values := map[string]string{
		"flinkUrlMode":           "Template",
		"flinkUrlTemplate":       fmt.Sprintf("%q", flinkURL+"/{{.Namespace}}/{{.Service}}"),
		"metricsAddress":         `"127.0.0.1:0"`,
		"workers":                "4",
		"waitPollInterval":       "500ms",
		"statusPollInterval":     "2s",
		"jobStabilizationPeriod": "2s",
		"clusterStartTimeout":    "60s",
		"readinessTimeout":       "30s",
		"savepointTimeout":       "60s",
		"cancelTimeout":          "30s",
		"maxBackoffDuration":     "5s",
		// The autoscaler samples as often as jobs are polled, so that a test's short metrics
		// window fills in seconds.
		"autoscaler": "{sampleInterval: 2s}",
		// Session jobs' jars come from a test server on this machine's loopback address, and
		// from nowhere else private.
		"jars": `{allowHTTP: true, allowedNetworks: ["127.0.0.1/32"]}`,
		// Each namespace's Flink UI Ingresses may claim hosts under its own domain only.
		"ingress": `{hostDomains: ["{{namespace}}.flink.test"]}`,
	}
	for k, v := range extra {
		values[k] = v
	}
	var b strings.Builder
	b.WriteString("operator:\n")
	for _, k := range sortedKeys(values) {
		fmt.Fprintf(&b, "  %s: %s\n", k, values[k])
	}
	b.WriteString("logger:\n  level: 4\n  formatter:\n    type: text\n")
	return b.String()
}

// StartOperator starts the operator process; its output goes to logs/operator.log.
func (e *Env) StartOperator() error {
	return e.startOperator("", e.configPath, nil)
}

// StartOperatorVariant starts the operator process as StartOperator does, with the environment's
// own config save for overrides (written to operator-variant.yaml), but runs binary instead of
// the operator the environment built (when binary is not "") and adds env ("GOGC=50") to the
// process's environment. The next StartOperator runs the environment's own operator again, as it
// is. A benchmark uses it to measure two builds, or two settings, on the same applications one
// after the other, which removes the difference between two runs of the whole fleet from the
// comparison.
func (e *Env) StartOperatorVariant(binary string, env []string, overrides map[string]string) error {
	if len(overrides) == 0 {
		return e.startOperator(binary, e.configPath, env)
	}
	path, err := e.writeConfig("operator-variant.yaml", overrides)
	if err != nil {
		return err
	}
	return e.startOperator(binary, path, env)
}

// writeConfig writes the environment's config with overrides over it to name in its directory.
func (e *Env) writeConfig(name string, overrides map[string]string) (string, error) {
	values := map[string]string{}
	for k, v := range e.operatorConfig {
		values[k] = v
	}
	for k, v := range overrides {
		values[k] = v
	}
	path := filepath.Join(e.Dir, name)
	return path, os.WriteFile(path, []byte(operatorConfig(e.FlinkURL, values)), 0o644)
}

// StartOperatorWith starts the operator process as StartOperator does, with some keys of its
// config changed for this process only (written to operator-override.yaml); the next StartOperator
// goes back to the environment's own config. Tests use it to make a restarted operator judge
// phases by deadlines shorter than the suite's, rather than wait the suite's out.
func (e *Env) StartOperatorWith(overrides map[string]string) error {
	path, err := e.writeConfig("operator-override.yaml", overrides)
	if err != nil {
		return err
	}
	return e.startOperator("", path, nil)
}

// startOperator starts binary ("": the environment's own) with configPath, env added to this
// process's environment.
func (e *Env) startOperator(binary, configPath string, env []string) error {
	if binary == "" {
		binary = e.binary
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.operator != nil {
		return fmt.Errorf("the operator is already running")
	}
	logFile, err := os.OpenFile(filepath.Join(e.Dir, "logs", "operator.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	var logStart int64
	if info, err := logFile.Stat(); err == nil {
		logStart = info.Size()
	}
	args := []string{"run", "--kubeconfig", e.Cluster.KubeconfigPath, "--config", configPath}
	cmd := exec.Command(binary, args...)
	if e.nice != 0 {
		// nice(1) sets the niceness before it execs the operator, so every thread the Go runtime
		// starts has it (Linux keeps a niceness per thread); the pid stays the operator's.
		cmd = exec.Command("nice", append([]string{"-n", strconv.Itoa(e.nice), binary}, args...)...)
	}
	if env = append(slices.Clip(e.operatorEnv), env...); len(env) > 0 {
		// Later entries win, so env overrides what this process has of the same name.
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group, and killed with us, so that no operator outlives the environment.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logFile.Close(); close(exited) }()
	e.operator, e.exited, e.logStart = cmd, exited, logStart
	what := ""
	if binary != e.binary {
		what += ", binary " + binary
	}
	if len(env) > 0 {
		what += fmt.Sprintf(", environment %v added", env)
	}
	if e.nice != 0 {
		what += fmt.Sprintf(", nice %d", e.nice)
	}
	e.logf("operator started (pid %d, config %s%s), log %s", cmd.Process.Pid, configPath, what, logFile.Name())
	return nil
}

// SetOperatorNice sets the niceness of the operator processes started from now on.
func (e *Env) SetOperatorNice(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nice = n
}

// OperatorNiceness is the running operator's niceness as the kernel has it (that of its main
// thread): nice(1) without the privilege to lower it runs the operator at its own. ok is false
// when no operator runs or /proc cannot tell.
func (e *Env) OperatorNiceness() (n int, ok bool) {
	e.mu.Lock()
	cmd := e.operator
	e.mu.Unlock()
	if cmd == nil {
		return 0, false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	if err != nil {
		return 0, false
	}
	// The fields after the command's name, which may hold spaces, in parentheses: niceness is the
	// 19th field of the line, the 17th after the name.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, false
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 17 {
		return 0, false
	}
	n, err = strconv.Atoi(fields[16])
	return n, err == nil
}

// KillOperator kills the operator with SIGKILL, as a node failure or OOM kill would, and waits for it.
func (e *Env) KillOperator() {
	e.mu.Lock()
	cmd, exited := e.operator, e.exited
	e.operator = nil
	e.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
	e.logf("operator killed")
}

// OperatorLog is the operator's output so far.
func (e *Env) OperatorLog() string {
	b, _ := os.ReadFile(filepath.Join(e.Dir, "logs", "operator.log"))
	return string(b)
}

// Stop stops the operator, the simulator and the cluster. Logs stay in Dir.
func (e *Env) Stop() {
	e.KillOperator()
	if e.cancel != nil {
		e.cancel()
	}
	if e.Cluster != nil {
		_ = e.Cluster.Stop()
	}
}

func (e *Env) logf(format string, args ...any) {
	fmt.Fprintf(e.log, "[localenv] "+format+"\n", args...)
}

func (e *Env) waitForCRD(ctx context.Context) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		// Every kind the operator watches must be served before it starts.
		one := metav1.ListOptions{Limit: 1}
		_, err := e.Apps.FlinkV1beta1().FlinkApplications("default").List(ctx, one)
		if err == nil {
			_, err = e.Apps.FlinkV1beta1().FlinkSessionClusters("default").List(ctx, one)
		}
		if err == nil {
			_, err = e.Apps.FlinkV1beta1().FlinkSessionJobs("default").List(ctx, one)
		}
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, nil
	})
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Replica is an operator process started beside the environment's own, for tests of several
// operators at once (leader election). It logs to logs/operator-<name>.log.
type Replica struct {
	Name   string
	cmd    *exec.Cmd
	exited chan struct{}
}

// StartReplica starts another operator process with the environment's config changed by overrides.
func (e *Env) StartReplica(name string, overrides map[string]string) (*Replica, error) {
	path, err := e.WriteOperatorConfig(name, overrides)
	if err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(filepath.Join(e.Dir, "logs", "operator-"+name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(e.binary, "run", "--kubeconfig", e.Cluster.KubeconfigPath, "--config", path)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	r := &Replica{Name: name, cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); logFile.Close(); close(r.exited) }()
	e.logf("operator replica %s started (pid %d)", name, cmd.Process.Pid)
	return r, nil
}

// WriteOperatorConfig writes the environment's operator config with some keys changed to
// operator-<name>.yaml and returns its path, for StartReplicaWith.
func (e *Env) WriteOperatorConfig(name string, overrides map[string]string) (string, error) {
	values := map[string]string{}
	for k, v := range e.operatorConfig {
		values[k] = v
	}
	for k, v := range overrides {
		values[k] = v
	}
	path := filepath.Join(e.Dir, "operator-"+name+".yaml")
	return path, os.WriteFile(path, []byte(operatorConfig(e.FlinkURL, values)), 0o644)
}

// Pid is the replica's process id.
func (r *Replica) Pid() int { return r.cmd.Process.Pid }

// Kill kills the replica with SIGKILL and waits for it.
func (r *Replica) Kill() {
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	<-r.exited
}

// ExitCode is the replica's exit code once it exited, -1 before or when a signal ended it.
func (r *Replica) ExitCode() int {
	if !r.Exited() {
		return -1
	}
	return r.cmd.ProcessState.ExitCode()
}

// Exited tells whether the replica's process ended.
func (r *Replica) Exited() bool {
	select {
	case <-r.exited:
		return true
	default:
		return false
	}
}

// waitForPolicy waits until the API server enforces the pod security policy: a policy takes effect a
// moment after it is created.
func (e *Env) waitForPolicy(ctx context.Context) error {
	hostile := &v1beta1.FlinkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: "policy-probe", Namespace: "default"},
		Spec: v1beta1.FlinkApplicationSpec{JarName: "probe.jar", Parallelism: 1, ClusterSpec: v1beta1.ClusterSpec{Image: "flink:1.20",
			Volumes: []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}}},
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = e.Apps.FlinkV1beta1().FlinkApplications("default").Create(ctx, hostile, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return last != nil && strings.Contains(last.Error(), "hostPath"), nil
	})
	if err != nil {
		return fmt.Errorf("the pod security policy is not enforced (a hostPath application got: %v): %w", last, err)
	}
	return nil
}
