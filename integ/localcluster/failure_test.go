//go:build linux

package localcluster

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A component that dies during start-up must fail Start with its own words, and leave nothing
// running.
func TestStartFailsWithTheBrokenComponentsLog(t *testing.T) {
	built, err := LocateBinaries()
	if err != nil {
		t.Skipf("binaries unavailable: %v", err)
	}
	bin := t.TempDir()
	for _, name := range requiredBinaries {
		if err := os.Symlink(filepath.Join(built, name), filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	broken := filepath.Join(bin, "kube-apiserver")
	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho 'E0101 cannot reach the moon'\nexit 3\n"
	if err := os.WriteFile(broken, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{BinDir: bin, Dir: dir})
	if err == nil {
		_ = c.Stop()
		t.Fatal("Start succeeded with a broken kube-apiserver")
	}
	t.Log(err)
	for _, want := range []string{"kube-apiserver", "cannot reach the moon", "exit status 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if left := processesMentioning(dir); len(left) > 0 {
		t.Errorf("processes still running after a failed Start: %v", left)
	}
	if _, err := os.Stat(filepath.Join(dir, "logs", "etcd.log")); err != nil {
		t.Errorf("logs not kept: %v", err)
	}
}

// processesMentioning lists command lines of live processes with s in their arguments; every
// component gets paths inside the cluster's Dir on its command line.
func processesMentioning(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(s)) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if strings.Contains(string(stat), ") Z ") { // a zombie has exited; only reaping is left
			continue
		}
		found = append(found, e.Name()+": "+string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return found
}
