package lyftcompat

import (
	"flag"
	"os"
	"testing"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/integ/suite"
)

// env is the environment every test shares; each test works in its own namespace.
var env *localenv.Env

// theSuite is this binary's environment with its logs.
var theSuite *suite.Suite

// operatorConfig is the harness's operator config with one change: jobStabilizationPeriod 0, which
// docs/migrating-from-lyft.md names as the setting that gives Lyft's behaviour exactly (a new job
// counts as started as soon as all its tasks run). Lyft's scenarios depend on it: TestRecovery's new
// job keeps failing and Lyft still reaches Running with it.
var operatorConfig = map[string]string{"jobStabilizationPeriod": "0s"}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(suite.Main(m, suite.Options{
		Name:           "lyftcompat",
		OperatorConfig: operatorConfig,
		Started: func(s *suite.Suite) {
			theSuite, env = s, s.Env
			declareTestImages()
		},
	}))
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

// stopEnvOnPanic is deferred by every test: a panic ends the process without TestMain's clean-up.
func stopEnvOnPanic() {
	if r := recover(); r != nil {
		theSuite.StopAfterPanic()
		panic(r)
	}
}
