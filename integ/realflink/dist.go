package realflink

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Dist is one Flink release as hack/flink-dist.sh leaves it in the cache: lib/ (flink-dist and the
// rest of the distribution's jars), plugins/, bin/bash-java-utils.jar and conf/ with defaults.
type Dist struct {
	// Version is the patch release, e.g. "1.20.5", whatever name it was asked for by.
	Version string
	// Home is its directory.
	Home string
}

// CacheDir is where hack/flink-dist.sh and hack/flinkjob.sh put what they build: $FLINKFSM_CACHE,
// else ~/.cache/flinkfsm.
func CacheDir() (string, error) {
	if c := os.Getenv("FLINKFSM_CACHE"); c != "" {
		return c, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locating the cache: %w", err)
	}
	return filepath.Join(home, ".cache", "flinkfsm"), nil
}

// FindDist finds a cached release by the name hack/flink-dist.sh was given ("1.20", "2.3.0"). Its
// error says how to put the release there, for a test's skip message.
func FindDist(name string) (Dist, error) {
	cache, err := CacheDir()
	if err != nil {
		return Dist{}, err
	}
	home := filepath.Join(cache, "flink", name)
	raw, err := os.ReadFile(filepath.Join(home, "VERSION"))
	if err != nil {
		return Dist{}, fmt.Errorf("no Flink %s in %s (make flink-dist FLINK_VERSIONS=%s): %w",
			name, filepath.Join(cache, "flink"), name, err)
	}
	if resolved, err := filepath.EvalSymlinks(home); err == nil {
		home = resolved
	}
	return Dist{Version: strings.TrimSpace(string(raw)), Home: home}, nil
}

// TestJobJar is the test job of integ/flinkjob built against this release by hack/flinkjob.sh.
func (d Dist) TestJobJar() (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	jar := filepath.Join(cache, "flinkjob", d.Version, "flinkfsm-test-job.jar")
	if _, err := os.Stat(jar); err != nil {
		return "", fmt.Errorf("no test job for Flink %s (make flinkjob FLINK_VERSIONS=%s): %w", d.Version, d.Version, err)
	}
	return jar, nil
}

// classpath is what Flink's scripts put on a JobManager's or TaskManager's class path: every jar of
// lib/, flink-dist last.
func (d Dist) classpath() (string, error) {
	jars, err := filepath.Glob(filepath.Join(d.Home, "lib", "*.jar"))
	if err != nil {
		return "", err
	}
	sort.Strings(jars)
	var dist string
	var out []string
	for _, j := range jars {
		if strings.HasPrefix(filepath.Base(j), "flink-dist") {
			dist = j
			continue
		}
		out = append(out, j)
	}
	if dist == "" {
		return "", fmt.Errorf("no flink-dist jar in %s", filepath.Join(d.Home, "lib"))
	}
	return strings.Join(append(out, dist), string(os.PathListSeparator)), nil
}

// Major and minor of the release, for what differs between 1.x and 2.x.
func (d Dist) atLeast(major, minor int) bool {
	var ma, mi int
	fmt.Sscanf(d.Version, "%d.%d", &ma, &mi)
	return ma > major || (ma == major && mi >= minor)
}
