package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/flinkfsm/flinkfsm/integ/localcluster"
)

// floorSource says where (b)'s floor came from when -floor-from took it from an earlier run's
// results instead of measuring it: at 10,000 applications the floor and deleting its namespaces
// take about 47 minutes, and the floor is the cluster's own work, which the operator's changes do
// not move. Every floor figure of the scaleResult that carries it (floorSeconds, floorAppliedSeconds,
// floorRequestsPerApp, floorCPUSeconds, floorProcesses) is that run's, not this one's.
type floorSource struct {
	Path         string  `json:"path"`
	FloorSeconds float64 `json:"floorSeconds"`
	// Date, Commit, Command and LoadAverageStart are the earlier run's, so that a reader can judge
	// how far apart the two runs' machines and code were.
	Date             string `json:"date"`
	Commit           string `json:"commit"`
	Command          string `json:"command"`
	LoadAverageStart string `json:"loadAverageAtStart"`
}

// takenFloor is a floor read from an earlier run's results, checked against this run's size.
type takenFloor struct {
	source floorSource
	run    floorRun
	// cluster is the sizing the earlier run's cluster had, which this run's must have too.
	cluster localcluster.Sizing
}

// earlierResults is the part of a results file that -floor-from reads.
type earlierResults struct {
	Conditions conditions   `json:"conditions"`
	Scale      *scaleResult `json:"scale"`
}

// loadFloor reads the floor of (b) from the results file at path and refuses it unless that run
// had this run's size: the same N, checkpointing fraction, applications per namespace, cluster
// sizing, Kubernetes and number of CPUs. A floor of another size would make the ratio meaningless.
func loadFloor(path string, o options) (*takenFloor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-floor-from: %w", err)
	}
	// This run's results, whose floor is taken, would replace the only record of the measured one.
	if from, err := os.Stat(path); err == nil {
		if out, err := os.Stat(o.out); err == nil && os.SameFile(from, out) {
			return nil, fmt.Errorf("-floor-from %s: -out would write this run's results over it; give -out another file", path)
		}
	}
	var earlier earlierResults
	if err := json.Unmarshal(data, &earlier); err != nil {
		return nil, fmt.Errorf("-floor-from %s: not a results file of the bench: %w", path, err)
	}
	sc, c := earlier.Scale, earlier.Conditions
	if sc == nil || sc.FloorSeconds <= 0 {
		return nil, fmt.Errorf("-floor-from %s: it has no floor of (b) (the results of a -soak-only run?)", path)
	}
	if sc.FloorFrom != nil {
		// Its figure would be the same, but its conditions would be the middle run's, not those the
		// floor was measured under.
		return nil, fmt.Errorf("-floor-from %s: that run took its floor from %s in turn; take it from there, where it was measured",
			path, sc.FloorFrom.Path)
	}
	var differ []string
	if c.N != o.n || sc.N != o.n {
		differ = append(differ, fmt.Sprintf("N is %d there, %d here", c.N, o.n))
	}
	if c.CheckpointingFraction != o.checkpointingFraction {
		differ = append(differ, fmt.Sprintf("-checkpointing-fraction is %g there, %g here", c.CheckpointingFraction, o.checkpointingFraction))
	}
	if per, err := recordedPerNamespace(c); err != nil {
		differ = append(differ, err.Error())
	} else if there, here := min(per, c.N), min(o.perNamespace, o.n); there != here {
		// Beyond N every application is in the first namespace, whatever the flag said.
		differ = append(differ, fmt.Sprintf("-apps-per-namespace is %d there, %d here", there, here))
	}
	if want := max(o.sizeFor, applicationsAtOnce(o)); c.Cluster.Applications != want {
		d := fmt.Sprintf("the cluster was sized for %d applications there, for %d here", c.Cluster.Applications, want)
		if c.Cluster.Applications > want {
			d += fmt.Sprintf(" (-size-for %d sizes it as there)", c.Cluster.Applications)
		}
		differ = append(differ, d)
	}
	if here := localcluster.KubernetesVersion + ", kwok " + localcluster.KwokVersion; c.Kubernetes != here {
		differ = append(differ, fmt.Sprintf("Kubernetes is %q there, %q here", c.Kubernetes, here))
	}
	if c.CPUs != runtime.NumCPU() {
		differ = append(differ, fmt.Sprintf("%d CPUs there, %d here", c.CPUs, runtime.NumCPU()))
	}
	if len(differ) > 0 {
		return nil, fmt.Errorf("-floor-from %s: not a floor of this run's size: %s; measure the floor instead (leave -floor-from out)",
			path, strings.Join(differ, "; "))
	}
	return &takenFloor{
		source: floorSource{Path: path, FloorSeconds: sc.FloorSeconds, Date: c.Date, Commit: c.Commit, Command: c.Command,
			LoadAverageStart: c.LoadAverageStart},
		run: floorRun{seconds: sc.FloorSeconds, applied: sc.FloorAppliedSeconds, requests: sc.FloorRequests,
			cpu: sc.FloorCPU, processes: sc.FloorProcesses},
		cluster: c.Cluster,
	}, nil
}

// sameCluster refuses the floor when this run's cluster, once started, is not sized as the earlier
// run's was: loadFloor compared the applications it is sized for, but the sizing also depends on
// the machine (etcd in /dev/shm or on disk) and on the code that sizes it.
func (t *takenFloor) sameCluster(here localcluster.Sizing) error {
	if here == t.cluster {
		return nil
	}
	var a, b map[string]any
	there, _ := json.Marshal(t.cluster)
	ours, _ := json.Marshal(here)
	_ = json.Unmarshal(there, &a)
	_ = json.Unmarshal(ours, &b)
	var differ []string
	for k := range a {
		if fmt.Sprint(a[k]) != fmt.Sprint(b[k]) {
			differ = append(differ, fmt.Sprintf("%s %v there, %v here", k, a[k], b[k]))
		}
	}
	sort.Strings(differ)
	return fmt.Errorf("-floor-from %s: this run's cluster is not sized as that run's was (%s); measure the floor instead (leave -floor-from out)",
		t.source.Path, strings.Join(differ, "; "))
}

// perNamespaceCommit is the commit that brought -apps-per-namespace, at 1,000 ever since; before
// it, (b) put all its applications in one namespace.
const perNamespaceCommit = "82f35186924110da6f1619d8f1efc24866796008"

// recordedPerNamespace is how many applications a namespace the earlier run had. Results written
// before conditions recorded it say it only in their command line, or by the flag's default at
// their commit when the command left it out.
func recordedPerNamespace(c conditions) (int, error) {
	if c.AppsPerNamespace > 0 {
		return c.AppsPerNamespace, nil
	}
	if v, ok := flagValue(c.Command, "apps-per-namespace"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("its command's -apps-per-namespace %q is not a number", v)
		}
		if n <= 0 {
			n = c.N
		}
		return n, nil
	}
	if c.N <= 1000 {
		// One namespace, with the flag at its default or before it.
		return c.N, nil
	}
	commit := strings.TrimSuffix(c.Commit, "-dirty")
	err := exec.Command("git", "merge-base", "--is-ancestor", perNamespaceCommit, commit).Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 1000, nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return c.N, nil
	default:
		return 0, fmt.Errorf("it does not record its applications per namespace, and git cannot place its commit %q to tell (%v)", c.Commit, err)
	}
}

// flagValue is the value a command line gave a flag (-name v, -name=v, or with two dashes).
func flagValue(command, name string) (string, bool) {
	args := strings.Fields(command)
	for i, a := range args {
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// floorFile is where a run keeps the floor it measured, beside its results: at 10,000 applications
// the floor took 59 minutes and deleting it 32 more on 2026-11-28, and a run that ends before its
// results are written (a timeout, an API server's error, a session's end) lost it with every other
// figure. -floor-from reads the file as it reads a results file.
func floorFile(out string) string {
	return strings.TrimSuffix(out, ".json") + ".floor.json"
}

// writeFloor writes a results file that holds only the run's conditions and the floor of n.
func writeFloor(path string, c conditions, n int, f floorRun) error {
	data, err := json.MarshalIndent(earlierResults{Conditions: c, Scale: &scaleResult{N: n, FloorSeconds: f.seconds,
		FloorAppliedSeconds: f.applied, FloorRequests: f.requests, FloorCPU: f.cpu, FloorProcesses: f.processes}}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
