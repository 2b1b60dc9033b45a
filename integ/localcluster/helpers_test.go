//go:build linux

package localcluster

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestNodeSchedulable(t *testing.T) {
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	notReady := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse}
	notReadyTaint := corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule}
	for _, tc := range []struct {
		name   string
		conds  []corev1.NodeCondition
		taints []corev1.Taint
		cordon bool
		want   bool
	}{
		{name: "ready and untainted", conds: []corev1.NodeCondition{ready}, want: true},
		{name: "no status yet"},
		{name: "not ready", conds: []corev1.NodeCondition{notReady}},
		{name: "ready but still tainted", conds: []corev1.NodeCondition{ready}, taints: []corev1.Taint{notReadyTaint}},
		{name: "ready, only a PreferNoSchedule taint", conds: []corev1.NodeCondition{ready},
			taints: []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectPreferNoSchedule}}, want: true},
		{name: "cordoned", conds: []corev1.NodeCondition{ready}, cordon: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size, _ := sizeFor(0)
			node := fakeNode("n", size)
			node.Status.Conditions = tc.conds
			node.Spec.Taints = tc.taints
			node.Spec.Unschedulable = tc.cordon
			if got := nodeSchedulable(node); got != tc.want {
				t.Fatalf("nodeSchedulable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestListensOnTellsOwnSocketsFromOthers(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	free, err := freePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	if free[0] == free[1] {
		t.Fatalf("freePorts returned %v twice", free[0])
	}
	if !listensOn(os.Getpid(), []int{port}) {
		t.Errorf("our own listener on %d not recognised", port)
	}
	if listensOn(os.Getpid(), []int{port, free[0]}) {
		t.Errorf("claims to listen on closed port %d", free[0])
	}
	if listensOn(1, []int{port}) {
		t.Errorf("pid 1 credited with our socket on %d", port)
	}
}

func TestCheckBinDirNamesWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	for _, name := range requiredBinaries[:len(requiredBinaries)-1] {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "kwok"), nil, 0o644); err != nil { // not executable
		t.Fatal(err)
	}
	err := checkBinDir(dir)
	if err == nil || !strings.Contains(err.Error(), "kwok") || strings.Contains(err.Error(), "etcd") {
		t.Fatalf("checkBinDir = %v, want only kwok reported", err)
	}
	if err := os.Chmod(filepath.Join(dir, "kwok"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkBinDir(dir); err != nil {
		t.Fatalf("complete dir rejected: %v", err)
	}
}

// The build script is how a fresh machine gets binaries; with a warm cache it only prints the
// directory, which must be the one LocateBinaries looks in.
func TestBuildScriptAgreesWithLocateBinaries(t *testing.T) {
	if os.Getenv(BinDirEnv) != "" {
		t.Skipf("%s overrides the cache", BinDirEnv)
	}
	want, err := LocateBinaries()
	if err != nil {
		t.Skipf("binaries not built, the script would build them: %v", err)
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	got, err := runBuildScript(context.Background(), filepath.Join(root, "hack", "build-k8s-binaries.sh"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("script printed %q, LocateBinaries found %q", got, want)
	}
}
