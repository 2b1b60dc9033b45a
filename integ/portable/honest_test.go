package portable

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The suite stays portable: no file of it may import the Flink simulator or integ/suite (the
// simulator-backed suites' environment), and only local_test.go, which starts the embedded
// environment, may import integ/localenv (which holds the simulator). The tests see the cluster
// through suite's Kubernetes clients alone, so none can reach for a simulator-only hook that a real
// cluster would not have.
func TestNoSimulatorImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files found (%v)", err)
	}
	const module = "github.com/flinkfsm/flinkfsm/"
	for _, file := range files {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case path == module+"integ/flinksim" || strings.HasPrefix(path, module+"integ/flinksim/"):
				t.Errorf("%s imports %s: the portable suite must not depend on the simulator", file, path)
			case path == module+"integ/suite":
				t.Errorf("%s imports %s: it holds the simulator-backed environment; integ/testkit is the part without it", file, path)
			case path == module+"integ/localenv" && file != "local_test.go":
				t.Errorf("%s imports %s: only local_test.go may, to start the embedded environment", file, path)
			}
		}
	}
}
