package repo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRootFindsTheModuleFromASubdirectory(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "deploy", "kustomization.yaml")); err != nil {
		t.Fatalf("Root() = %s, which is not the flinkfsm tree: %v", root, err)
	}
	t.Chdir(t.TempDir())
	if _, err := Root(); err == nil {
		t.Fatal("Root() found a tree above a temporary directory")
	}
}
