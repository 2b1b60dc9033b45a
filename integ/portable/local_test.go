package portable

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flinkfsm/flinkfsm/integ/localcluster"
	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/integ/testkit"
)

// startLocal starts the embedded environment as integ/e2e does: a local control plane, the Flink
// simulator and the operator process. This file alone may import localenv (honest_test.go): the
// tests get the environment's Kubernetes clients and nothing else of it.
func startLocal(ctx context.Context) (*cluster, error) {
	if _, err := localcluster.LocateBinaries(); err != nil && os.Getenv(localcluster.RequireClusterEnv) == "" {
		// Like integ/e2e: plain `go test` stays usable on machines without the build.
		return nil, errSkipSuite{fmt.Sprintf("Kubernetes binaries not built (%v); set %s=1 to build them",
			err, localcluster.RequireClusterEnv)}
	}
	dir, err := os.MkdirTemp("", "flinkfsm-portable-")
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "localenv.log"))
	if err != nil {
		return nil, err
	}
	env, err := localenv.Start(ctx, localenv.Options{Dir: filepath.Join(dir, "env"), Log: logFile,
		OperatorConfig: map[string]string{"jobStabilizationPeriod": "2s"}})
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("%w (logs in %s)", err, dir)
	}
	return &cluster{
		Kube:     env.Kube,
		Apps:     env.Apps,
		Describe: fmt.Sprintf("logs in %s (operator.log; cluster component logs in %s)", filepath.Join(env.Dir, "logs"), env.Cluster.LogDir()),
		OperatorLines: func(text string, n int) string {
			return testkit.LinesAbout(env.OperatorLog(), text, n)
		},
		stop: func(keepLogs bool) {
			env.Stop()
			logFile.Close()
			if !keepLogs {
				_ = os.RemoveAll(dir)
			}
		},
	}, nil
}
