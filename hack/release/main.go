// Command release builds the kubectl-flink plugin for every platform a release ships, packs each
// binary in a .tar.gz with the README, and writes checksums.txt and a krew plugin manifest
// (krew/flink.yaml) that points at the archives where the release publishes them:
//
//	go run ./hack/release -version v0.3.0 [-out dist] [-url https://github.com/flinkfsm/flinkfsm/releases/download/v0.3.0]
//
// `make release VERSION=v0.3.0` runs it.
package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// platforms are the GOOS/GOARCH pairs a release ships.
var platforms = []platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"}}

type platform struct{ OS, Arch string }

func (p platform) binary() string {
	if p.OS == "windows" {
		return "kubectl-flink.exe"
	}
	return "kubectl-flink"
}

// artifact is one platform's archive.
type artifact struct {
	platform
	File   string // archive file name
	SHA256 string
}

func main() {
	version := flag.String("version", "", "release version, such as v0.3.0 (required)")
	out := flag.String("out", "dist", "output directory")
	url := flag.String("url", "", "where the archives are published (default: the GitHub release of -version)")
	flag.Parse()
	if *version == "" {
		fmt.Fprintln(os.Stderr, "release: -version is required")
		os.Exit(2)
	}
	if *url == "" {
		*url = "https://github.com/flinkfsm/flinkfsm/releases/download/" + *version
	}
	if err := release(*version, *out, *url); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func release(version, out, url string) error {
	if err := os.MkdirAll(filepath.Join(out, "krew"), 0o755); err != nil {
		return err
	}
	var artifacts []artifact
	for _, p := range platforms {
		a, err := build(version, out, p)
		if err != nil {
			return fmt.Errorf("%s/%s: %w", p.OS, p.Arch, err)
		}
		artifacts = append(artifacts, a)
		fmt.Printf("%s  %s\n", a.SHA256, a.File)
	}
	var sums strings.Builder
	for _, a := range artifacts {
		fmt.Fprintf(&sums, "%s  %s\n", a.SHA256, a.File)
	}
	if err := os.WriteFile(filepath.Join(out, "checksums.txt"), []byte(sums.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "krew", "flink.yaml"), krewManifest(version, url, artifacts), 0o644)
}

// build cross-compiles the plugin for p and packs it with the README.
func build(version, out string, p platform) (artifact, error) {
	dir, err := os.MkdirTemp("", "kubectl-flink-")
	if err != nil {
		return artifact{}, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, p.binary())
	cmd := exec.Command("go", "build", "-trimpath",
		"-ldflags", "-s -w -X github.com/flinkfsm/flinkfsm/pkg/cli.Version="+version, "-o", bin, "./cmd/kubectl-flink")
	cmd.Env = append(os.Environ(), "GOOS="+p.OS, "GOARCH="+p.Arch, "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return artifact{}, err
	}
	a := artifact{platform: p, File: fmt.Sprintf("kubectl-flink_%s_%s_%s.tar.gz", version, p.OS, p.Arch)}
	path := filepath.Join(out, a.File)
	if err := pack(path, map[string]string{p.binary(): bin, "README.md": "README.md", "kubectl-flink.md": "docs/kubectl-flink.md"}); err != nil {
		return artifact{}, err
	}
	a.SHA256, err = sha256Of(path)
	return a, err
}

// pack writes a .tar.gz of the files (name in the archive: path on disk), executable when named
// like the plugin.
func pack(path string, files map[string]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		body, err := os.ReadFile(files[name])
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if strings.HasPrefix(name, "kubectl-flink") && !strings.HasSuffix(name, ".md") {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(body))}); err != nil {
			return err
		}
		if _, err := tw.Write(body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func sha256Of(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// krewManifest is the krew plugin manifest of the release: `kubectl krew install --manifest=flink.yaml`
// installs it, and it is what a krew-index entry would hold.
func krewManifest(version, url string, artifacts []artifact) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: flink
spec:
  version: %s
  homepage: https://github.com/flinkfsm/flinkfsm
  shortDescription: Operate Flink jobs run by the flinkfsm operator
  description: |
    Status, history, wait (with exit codes for CI), savepoints, suspend and resume,
    restart, rollback, and blue/green promote and abort for FlinkApplications and
    FlinkSessionJobs. Every command is a read or a patch of the object's spec.
  platforms:
`, version)
	for _, a := range artifacts {
		fmt.Fprintf(&b, `    - selector:
        matchLabels:
          os: %s
          arch: %s
      uri: %s/%s
      sha256: %s
      bin: %s
`, a.OS, a.Arch, strings.TrimSuffix(url, "/"), a.File, a.SHA256, a.binary())
	}
	return []byte(b.String())
}
