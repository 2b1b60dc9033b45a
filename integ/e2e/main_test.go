package e2e

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/integ/suite"
)

// env is the one environment every test shares; each test isolates itself in its own namespace.
var env *localenv.Env

// theSuite is this binary's environment with its logs.
var theSuite *suite.Suite

// jobStabilizationPeriod is how long the operator watches a new job run before it counts as started;
// set here so that tests can check the operator waited for it.
const jobStabilizationPeriod = 2 * time.Second

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(suite.Main(m, suite.Options{
		Name:           "e2e",
		OperatorConfig: map[string]string{"jobStabilizationPeriod": jobStabilizationPeriod.String()},
		Started:        func(s *suite.Suite) { theSuite, env = s, s.Env },
	}))
}

// stopEnvOnPanic is deferred by every test: a panic in a test ends the process without running
// TestMain's deferred calls, so this says where the logs are and stops the environment first.
func stopEnvOnPanic() {
	if r := recover(); r != nil {
		theSuite.StopAfterPanic()
		panic(r)
	}
}
