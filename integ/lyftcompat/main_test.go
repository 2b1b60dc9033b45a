package lyftcompat

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

// env is the environment every test shares; each test works in its own namespace.
var env *localenv.Env

// envLogPath receives localenv's progress lines, among them the simulator's JobManager starts.
var envLogPath string

const startTimeout = 5 * time.Minute

// operatorConfig is the harness's operator config with one change: jobStabilizationPeriod 0, which
// docs/migrating-from-lyft.md names as the setting that gives Lyft's behaviour exactly (a new job
// counts as started as soon as all its tasks run). Lyft's scenarios depend on it: TestRecovery's new
// job keeps failing and Lyft still reaches Running with it.
var operatorConfig = map[string]string{"jobStabilizationPeriod": "0s"}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	if _, err := localcluster.LocateBinaries(); err != nil && os.Getenv(localcluster.RequireClusterEnv) == "" {
		fmt.Printf("lyftcompat: skipped, Kubernetes binaries not built (%v); set %s=1 to build them\n",
			err, localcluster.RequireClusterEnv)
		return 0
	}
	dir, err := os.MkdirTemp("", "flinkfsm-lyftcompat-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "lyftcompat:", err)
		return 1
	}
	envLogPath = filepath.Join(dir, "localenv.log")
	logFile, err := os.Create(envLogPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lyftcompat:", err)
		return 1
	}
	defer logFile.Close()
	fmt.Printf("lyftcompat: environment in %s\n", dir)

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	began := time.Now()
	env, err = localenv.Start(ctx, localenv.Options{Dir: filepath.Join(dir, "env"), Log: logFile, OperatorConfig: operatorConfig})
	if err != nil {
		fmt.Fprintf(os.Stderr, "lyftcompat: starting the environment: %v\n%s", err, tail(readFile(envLogPath), 30))
		return 1
	}
	fmt.Printf("lyftcompat: environment up in %s\n", time.Since(began).Round(100*time.Millisecond))
	declareTestImages()

	code := m.Run()
	if code != 0 {
		printFailureContext()
	}
	env.Stop()
	if code == 0 {
		_ = os.RemoveAll(dir)
	}
	return code
}

// Lyft's two test images (integ/setup.sh builds operator-test-app:local.1 and :local.2 from one
// Dockerfile) bundle exactly the test jar in Flink's upload directory; any other jarName is missing,
// as in Lyft's rollback scenarios.
const (
	testImage = "operator-test-app:local.1"
	newImage  = "operator-test-app:local.2" // Lyft's NewImage
	testJar   = "operator-test-app-1.0.0-SNAPSHOT.jar"
)

func declareTestImages() {
	for _, image := range []string{testImage, newImage} {
		env.Fleet.SetImageJars(image, []string{testJar})
	}
}

// garbageCollectorReady waits, once for the suite, until deleting a FlinkApplication garbage-collects
// its pods promptly; Lyft's scenarios wait for the pods to go after each delete.
var garbageCollectorReady = sync.OnceValue(func() error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	return env.WaitForGarbageCollector(ctx)
})

// stopEnvOnPanic is deferred by every test: a panic ends the process without TestMain's clean-up.
func stopEnvOnPanic() {
	if r := recover(); r != nil {
		printFailureContext()
		env.Stop()
		panic(r)
	}
}

func printFailureContext() {
	fmt.Printf("lyftcompat: logs in %s (operator.log; cluster component logs in %s)\n",
		filepath.Join(env.Dir, "logs"), env.Cluster.LogDir())
	fmt.Printf("lyftcompat: end of the operator log:\n%s\n", tail(env.OperatorLog(), 40))
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
