// Package repo finds the flinkfsm source tree, for tools and tests that read its files (manifests,
// build scripts) wherever `go test` or `make` runs them from.
package repo

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
)

// ModulePath is flinkfsm's Go module path.
const ModulePath = "github.com/flinkfsm/flinkfsm"

// Root walks up from the working directory to the directory whose go.mod declares flinkfsm's module.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module "+ModulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("the flinkfsm source tree is not above the working directory")
		}
		dir = parent
	}
}
