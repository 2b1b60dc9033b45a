package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/integ/localcluster"
	"github.com/flinkfsm/flinkfsm/integ/localenv"
)

// env is the one environment every test shares; each test isolates itself in its own namespace.
var env *localenv.Env

// envLogPath receives localenv's progress lines, among them the simulator's JobManager starts and losses.
var envLogPath string

// startTimeout bounds bringing the environment up: building the operator and starting the cluster.
const startTimeout = 5 * time.Minute

// jobStabilizationPeriod is how long the operator watches a new job run before it counts as started;
// set here so that tests can check the operator waited for it.
const jobStabilizationPeriod = 2 * time.Second

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	if _, err := localcluster.LocateBinaries(); err != nil && os.Getenv(localcluster.RequireClusterEnv) == "" {
		// Like localcluster.StartForTest: plain `go test` stays usable on machines without the build.
		fmt.Printf("e2e: skipped, Kubernetes binaries not built (%v); set %s=1 to build them\n",
			err, localcluster.RequireClusterEnv)
		return 0
	}
	dir, err := os.MkdirTemp("", "flinkfsm-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	envLogPath = filepath.Join(dir, "localenv.log")
	logFile, err := os.Create(envLogPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer logFile.Close()
	fmt.Printf("e2e: environment in %s\n", dir)

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	began := time.Now()
	env, err = localenv.Start(ctx, localenv.Options{Dir: filepath.Join(dir, "env"), Log: logFile,
		OperatorConfig: map[string]string{"jobStabilizationPeriod": jobStabilizationPeriod.String()}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: starting the environment: %v\n%s", err, tail(readFile(envLogPath), 30))
		return 1
	}
	fmt.Printf("e2e: environment up in %s\n", time.Since(began).Round(100*time.Millisecond))

	code := m.Run()
	if code != 0 {
		printFailureContext()
	}
	env.Stop()
	if code == 0 {
		// The logs only matter when something failed.
		_ = os.RemoveAll(dir)
	}
	return code
}

// garbageCollectorReady waits, once for the whole suite, until deleting a FlinkApplication
// garbage-collects its cluster promptly (see localenv's WaitForGarbageCollector). Only tests that
// delete applications need it, so the others need not wait.
var garbageCollectorReady = sync.OnceValue(func() error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	return env.WaitForGarbageCollector(ctx)
})

// stopEnvOnPanic is deferred by every test: a panic in a test ends the process without running
// TestMain's deferred calls, so this says where the logs are and stops the environment first.
func stopEnvOnPanic() {
	if r := recover(); r != nil {
		printFailureContext()
		env.Stop()
		panic(r)
	}
}

// printFailureContext says where the logs are and shows the end of the operator's.
func printFailureContext() {
	fmt.Printf("e2e: logs in %s (operator.log; cluster component logs in %s)\n",
		filepath.Join(env.Dir, "logs"), env.Cluster.LogDir())
	fmt.Printf("e2e: end of the operator log:\n%s\n", tail(env.OperatorLog(), 40))
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
