//go:build linux

package localcluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/flinkfsm/flinkfsm/internal/repo"
)

// Versions of the cached binaries; they must match the defaults in hack/build-k8s-binaries.sh so
// that a finished build is found without running the script.
const (
	KubernetesVersion = "v1.34.4"
	KwokVersion       = "v0.7.0"
)

// BinDirEnv names the environment variable that points at a directory holding all binaries.
const BinDirEnv = "FLINKFSM_K8S_BIN"

const modulePath = "github.com/flinkfsm/flinkfsm"

var requiredBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok"}

// LocateBinaries finds an already built set of binaries without building anything: $FLINKFSM_K8S_BIN
// if set, else the cache directory hack/build-k8s-binaries.sh writes to. Tests use it to decide
// whether to skip.
func LocateBinaries() (string, error) {
	if dir := os.Getenv(BinDirEnv); dir != "" {
		return dir, checkBinDir(dir)
	}
	dir, err := defaultBinDir()
	if err != nil {
		return "", err
	}
	return dir, checkBinDir(dir)
}

func defaultBinDir() (string, error) {
	cache := os.Getenv("FLINKFSM_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("locating the binary cache: %w", err)
		}
		cache = filepath.Join(home, ".cache", "flinkfsm")
	}
	return filepath.Join(cache, "bin", "k8s-"+KubernetesVersion+"-kwok-"+KwokVersion), nil
}

func checkBinDir(dir string) error {
	var missing []string
	for _, name := range requiredBinaries {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || info.IsDir() || info.Mode().Perm()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("binary directory %s lacks %s", dir, strings.Join(missing, ", "))
	}
	return nil
}

// resolveBinDir returns the directory to run binaries from, building them with the repository's
// script when neither the options, the environment nor the cache provide a complete set.
func resolveBinDir(ctx context.Context, explicit string, log io.Writer) (string, error) {
	if explicit != "" {
		return explicit, checkBinDir(explicit)
	}
	if os.Getenv(BinDirEnv) != "" {
		return LocateBinaries()
	}
	if dir, err := LocateBinaries(); err == nil {
		return dir, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "hack", "build-k8s-binaries.sh")
	fmt.Fprintf(log, "building Kubernetes binaries with %s (cold: 15-20 minutes)\n", script)
	dir, err := runBuildScript(ctx, script, log)
	if err != nil {
		return "", err
	}
	return dir, checkBinDir(dir)
}

// runBuildScript runs the script in its own process group so that cancelling ctx also stops the
// `go build` processes it spawned, and returns the last line it printed on stdout.
func runBuildScript(ctx context.Context, script string, log io.Writer) (string, error) {
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Stdout = &stdout
	cmd.Stderr = log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("running %s: %w", script, err)
	}
	var last string
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			last = line
		}
	}
	if last == "" {
		return "", fmt.Errorf("%s printed no binary directory", script)
	}
	return last, nil
}

// moduleRoot is where tests and `make` find the build script.
func moduleRoot() (string, error) {
	root, err := repo.Root()
	if err != nil {
		return "", fmt.Errorf("%w; set %s", err, BinDirEnv)
	}
	return root, nil
}
