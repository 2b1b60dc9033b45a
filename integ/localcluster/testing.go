//go:build linux

package localcluster

import (
	"context"
	"os"
	"testing"
)

// RequireClusterEnv, when set to anything, turns "binaries missing" from a skip into a build.
const RequireClusterEnv = "FLINKFSM_REQUIRE_CLUSTER"

// StartForTest starts a cluster for t and stops it when t ends. It skips t when the binaries are
// not built and $FLINKFSM_REQUIRE_CLUSTER is unset, so plain `go test` stays fast on machines
// without them. Progress goes to t.Log; when t fails, the end of every component log is logged too.
func StartForTest(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.BinDir == "" && os.Getenv(RequireClusterEnv) == "" {
		if _, err := LocateBinaries(); err != nil {
			t.Skipf("local cluster binaries unavailable (%v); run hack/build-k8s-binaries.sh or set %s=1", err, RequireClusterEnv)
		}
	}
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Log == nil {
		opts.Log = testWriter{t}
	}
	c, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("starting local cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stopping local cluster: %v", err)
		}
		if t.Failed() {
			for _, p := range c.processes() {
				t.Logf("--- last lines of %s ---\n%s", p.logPath, p.logTail(30))
			}
		}
	})
	return c
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(trimNewline(p)))
	return len(p), nil
}

func trimNewline(p []byte) []byte {
	if n := len(p); n > 0 && p[n-1] == '\n' {
		return p[:n-1]
	}
	return p
}
