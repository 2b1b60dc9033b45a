package portable

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
)

// target is where the suite runs, chosen once from the environment by SelectTarget.
var target Target

// cluster is all a portable test may use: the Kubernetes API of the target, with the operator
// installed and running. Nothing here reaches Flink or the simulator.
type cluster struct {
	Kube kubernetes.Interface
	Apps versioned.Interface
	// Describe says where the target's logs are, for a failed test; OperatorLines are the
	// operator's log lines that mention text, when the suite can read them.
	Describe      string
	OperatorLines func(text string, n int) string
	// NoSharedState, when set, says why savepoints one Flink cluster takes cannot be read by the
	// next one here: the tests that need that skip with it.
	NoSharedState string
	// stop stops what the suite started; keepLogs keeps what a failure needs looked at.
	stop func(keepLogs bool)
}

// errSkipSuite is returned by a target that cannot start here for a reason that is not a failure
// (the local Kubernetes binaries are not built): the tests that need the cluster skip.
type errSkipSuite struct{ reason string }

func (e errSkipSuite) Error() string { return e.reason }

// startTimeout bounds bringing the target up: building and starting the local environment, or
// installing the chart (whose pods pull nothing: the image is loaded into the cluster).
const startTimeout = 10 * time.Minute

// theCluster starts the target the first time a test asks for it: tests that need no cluster (the
// selection logic's) run without one, so `go test -run TestSelect ./integ/portable/` takes a second.
var theCluster = sync.OnceValues(func() (*cluster, error) {
	started.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	began := time.Now()
	var c *cluster
	var err error
	if target.External {
		c, err = startExternal(ctx, target)
	} else {
		c, err = startLocal(ctx)
	}
	if err == nil {
		fmt.Printf("portable: %s up in %s\n", target, time.Since(began).Round(100*time.Millisecond))
		if c.NoSharedState != "" {
			// No state volume, then: the applications keep savepoints in their pods.
			target.StateVolume = false
			fmt.Printf("portable: tests that restore savepoints skip: %s\n", c.NoSharedState)
		}
	}
	return c, err
})

// started tells whether a test asked for the target.
var started atomic.Bool

// suite is the started target, for a test that needs it.
func suite(t *testing.T) *cluster {
	t.Helper()
	c, err := theCluster()
	var skip errSkipSuite
	switch {
	case errors.As(err, &skip):
		t.Skip(skip.reason)
	case err != nil:
		t.Fatalf("starting %s: %v", target, err)
	}
	return c
}

func TestMain(m *testing.M) {
	flag.Parse()
	var err error
	if target, err = SelectTarget(os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "portable:", err)
		os.Exit(2)
	}
	fmt.Printf("portable: target %s\n", target)
	code := m.Run()
	// Only a started target is stopped (sync.OnceValues would start it here otherwise).
	if started.Load() {
		if c, err := theCluster(); err == nil && c.stop != nil {
			if code != 0 {
				fmt.Println("portable:", c.Describe)
			}
			c.stop(code != 0)
		}
	}
	os.Exit(code)
}
