package suite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/integ/localcluster"
	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/integ/testkit"
)

// startTimeout bounds bringing the environment up: building the operator and starting the cluster.
const startTimeout = 5 * time.Minute

// Options are what tells one suite's environment from another's.
type Options struct {
	// Name prefixes the suite's lines and its temporary directory.
	Name string
	// OperatorConfig overrides the operator's configuration for the whole suite.
	OperatorConfig map[string]string
	// Started receives the suite before any test runs.
	Started func(s *Suite)
}

// detectCacheMutations turns on client-go's cache mutation detector in the operator: every object
// its informers hold is copied when stored and compared with the copy every second, and the
// operator panics, naming the object, when one differs. A pass reads the cached Deployments,
// Services, pods and ConfigMaps without copying them, so none may write into what an informer
// shares with every other pass; the suites run every path the operator has with it on.
const detectCacheMutations = "KUBE_CACHE_MUTATION_DETECTOR=true"

// Suite is one test binary's environment.
type Suite struct {
	name string
	Env  *localenv.Env
	// EnvLogPath receives localenv's progress lines, among them the simulator's JobManager starts
	// and losses.
	EnvLogPath string
	gcReady    func() error
}

// Main starts the environment, runs the tests and stops it, keeping the logs when a test failed.
// Without the Kubernetes binaries it skips the suite, as localcluster.StartForTest does, so that a
// plain `go test ./...` stays usable on a machine without the build.
func Main(m *testing.M, o Options) int {
	if _, err := localcluster.LocateBinaries(); err != nil && os.Getenv(localcluster.RequireClusterEnv) == "" {
		fmt.Printf("%s: skipped, Kubernetes binaries not built (%v); set %s=1 to build them\n",
			o.Name, err, localcluster.RequireClusterEnv)
		return 0
	}
	dir, err := os.MkdirTemp("", "flinkfsm-"+o.Name+"-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", o.Name, err)
		return 1
	}
	s := &Suite{name: o.Name, EnvLogPath: filepath.Join(dir, "localenv.log")}
	s.gcReady = sync.OnceValue(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		return s.Env.WaitForGarbageCollector(ctx)
	})
	logFile, err := os.Create(s.EnvLogPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", o.Name, err)
		return 1
	}
	defer logFile.Close()
	fmt.Printf("%s: environment in %s\n", o.Name, dir)

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	began := time.Now()
	s.Env, err = localenv.Start(ctx, localenv.Options{Dir: filepath.Join(dir, "env"), Log: logFile,
		OperatorConfig: o.OperatorConfig, OperatorEnv: []string{detectCacheMutations}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: starting the environment: %v\n%s", o.Name, err, testkit.Tail(testkit.ReadFile(s.EnvLogPath), 30))
		return 1
	}
	fmt.Printf("%s: environment up in %s\n", o.Name, time.Since(began).Round(100*time.Millisecond))
	if o.Started != nil {
		o.Started(s)
	}

	code := m.Run()
	if os.Getenv(localenv.RaceEnv) == "1" && strings.Contains(s.Env.OperatorLog(), "WARNING: DATA RACE") {
		fmt.Printf("%s: the race detector found a data race in the operator (see its log)\n", o.Name)
		code = 1
	}
	if code != 0 {
		s.PrintFailureContext()
	}
	s.Env.Stop()
	if code == 0 {
		// The logs only matter when something failed.
		_ = os.RemoveAll(dir)
	}
	return code
}

// GarbageCollectorReady waits, once for the whole suite, until deleting a FlinkApplication
// garbage-collects its cluster promptly (see localenv's WaitForGarbageCollector). Only tests that
// delete applications need it, so the others need not wait.
func (s *Suite) GarbageCollectorReady() error { return s.gcReady() }

// PrintFailureContext says where the logs are and shows the end of the operator's.
func (s *Suite) PrintFailureContext() {
	fmt.Printf("%s: logs in %s (operator.log; cluster component logs in %s)\n",
		s.name, filepath.Join(s.Env.Dir, "logs"), s.Env.Cluster.LogDir())
	fmt.Printf("%s: end of the operator log:\n%s\n", s.name, testkit.Tail(s.Env.OperatorLog(), 40))
}

// StopAfterPanic is for a test's deferred recover: a panic ends the process without running Main's
// clean-up, so this says where the logs are and stops the environment first.
func (s *Suite) StopAfterPanic() {
	s.PrintFailureContext()
	s.Env.Stop()
}
