// Command importrule fails when a package of the module depends on one of the module's packages
// its layer may not use, or when a package of pkg/ holds more than one concern's worth of code
// (size.go). The rules are the layering of docs/architecture.md as it holds today; each
// step that moves code out of pkg/controller/flinkapplication adds the rule its new package keeps.
// Dependencies are transitive (go list -deps): a package may not reach a forbidden one through
// another.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"

	"sort"
	"strings"
)

const module = "github.com/flinkfsm/flinkfsm/"

// rule says which of the module's packages the packages matching pattern may depend on. A pattern
// or an allowed entry ending in "/..." matches the folder and everything under it. The generated
// API client (pkg/client/...) and the API types are allowed wherever they are listed.
type rule struct {
	pattern string
	allowed []string
	why     string
}

var rules = []rule{
	{"pkg/apis/...", []string{"pkg/apis/..."}, "the API types depend on nothing of the operator"},
	{"pkg/printable", nil, "a leaf every layer may use"},
	{"pkg/idsource", nil, "a leaf every layer may use"},
	{"pkg/controller/autoscaler", nil, "the autoscaler decides from values: no Kubernetes, no Flink client, no machine"},
	{"pkg/controller/checkpointbook", nil, "the checkpoint book knows entries and pages, not the kinds that note them"},
	{"pkg/controller/config", nil, "configuration is read by every layer and reads none"},
	{"pkg/controller/loop", nil, "the generic loop knows no kind, no machine and no Flink"},
	{"pkg/controller/flink/client", []string{"pkg/printable"}, "the Flink REST client knows Flink, not the operator"},
	{"pkg/controller/jars", []string{"pkg/printable"}, "jar fetching knows URLs and files, not the kinds"},
	{"pkg/controller/jobs", []string{"pkg/controller/flink/client", "pkg/printable", "pkg/idsource"},
		"the job core works on one job through the Flink client, below every kind and the phase machine"},
	{"pkg/controller/ledger", []string{"pkg/apis/...", "pkg/controller/jobs", "pkg/controller/flink/client", "pkg/printable", "pkg/idsource"},
		"the state ledger is status's record of states, below every kind"},
	{"pkg/controller/guardian", []string{"pkg/controller/jobs", "pkg/controller/flink/client", "pkg/printable", "pkg/idsource"},
		"the guardian of durable state decides from values it is told"},
	{"pkg/controller/k8", []string{"pkg/apis/..."}, "Kubernetes helpers know the API types, not the kinds"},
	{"pkg/controller/flink", []string{"pkg/apis/...", "pkg/controller/k8", "pkg/controller/flink/client", "pkg/printable"},
		"a Flink cluster's objects and configuration, below every kind"},
	{"pkg/controller/clusters", []string{"pkg/apis/...", "pkg/controller/flink/...", "pkg/controller/k8", "pkg/controller/config",
		"pkg/printable", "pkg/idsource"},
		"the Kubernetes objects of one Flink cluster: no kind, no phase machine, no job core"},
	{"pkg/controller/watch", []string{"pkg/apis/...", "pkg/client/...", "pkg/controller/clusters", "pkg/controller/loop",
		"pkg/printable", "pkg/idsource",
		// What clusters depends on, which watch reaches through it. watch itself reads of k8 and
		// flink the labels and names of the objects a cluster is made of (which HA ConfigMap is whose,
		// the owner of a UI Ingress) and, for the per-object series, a job's checkpoint interval.
		"pkg/controller/flink/...", "pkg/controller/k8", "pkg/controller/config"},
		"the informers and their caches: no kind's handlers, no phase machine, no job core"},
	{"pkg/controller/fsm", []string{"pkg/apis/...", "pkg/controller/config"},
		"the phase machine's vocabulary knows no kind, no job and no cluster"},
	{"pkg/controller/jobstate", []string{"pkg/apis/...", "pkg/controller/jobs", "pkg/controller/ledger", "pkg/controller/checkpointbook",
		"pkg/controller/guardian", "pkg/controller/clusters", "pkg/controller/flink/...", "pkg/controller/k8", "pkg/controller/config", "pkg/printable", "pkg/idsource"},
		"the status side of one job knows no kind and no phase machine"},
	{"pkg/controller/snapshots", []string{"pkg/apis/...", "pkg/client/...", "pkg/controller/jobstate", "pkg/controller/watch", "pkg/controller/guardian",
		"pkg/controller/ledger", "pkg/controller/jobs", "pkg/controller/checkpointbook", "pkg/controller/clusters", "pkg/controller/loop",
		"pkg/controller/flink/...", "pkg/controller/k8", "pkg/controller/config", "pkg/printable", "pkg/idsource"},
		"the FlinkSnapshots of an owner are a step of its pass: no kind, no phase machine"},
	{"pkg/controller/lifecycle", []string{"pkg/apis/...", "pkg/client/...", "pkg/controller/fsm", "pkg/controller/jobstate", "pkg/controller/snapshots",
		"pkg/controller/watch", "pkg/controller/guardian", "pkg/controller/ledger", "pkg/controller/jobs", "pkg/controller/checkpointbook",
		"pkg/controller/clusters", "pkg/controller/loop", "pkg/controller/flink/...", "pkg/controller/k8", "pkg/controller/config", "pkg/printable",
		"pkg/idsource"},
		"the job phases every kind shares know no kind"},
	{"pkg/controller/autoscaling", []string{"pkg/apis/...", "pkg/controller/autoscaler", "pkg/controller/jobs", "pkg/controller/flink/client",
		"pkg/controller/config", "pkg/printable", "pkg/idsource"},
		"what the autoscaler reads and keeps takes values: no kind, no pass, no phase machine"},
	{"pkg/controller/kindpass", []string{"pkg/apis/...", "pkg/client/...", "pkg/controller/lifecycle", "pkg/controller/fsm", "pkg/controller/jobstate",
		"pkg/controller/snapshots", "pkg/controller/watch", "pkg/controller/guardian", "pkg/controller/ledger", "pkg/controller/jobs",
		"pkg/controller/checkpointbook", "pkg/controller/clusters", "pkg/controller/loop", "pkg/controller/jars", "pkg/controller/flink/...",
		"pkg/controller/k8", "pkg/controller/config", "pkg/printable", "pkg/idsource"},
		"what every kind's pass is built on knows no kind"},
	{"pkg/controller/sessioncluster", []string{"pkg/apis/...", "pkg/client/...", "pkg/controller/kindpass", "pkg/controller/lifecycle",
		"pkg/controller/fsm", "pkg/controller/jobstate", "pkg/controller/snapshots", "pkg/controller/watch", "pkg/controller/guardian",
		"pkg/controller/ledger", "pkg/controller/jobs", "pkg/controller/checkpointbook", "pkg/controller/clusters", "pkg/controller/loop",
		"pkg/controller/jars", "pkg/controller/flink/...", "pkg/controller/k8", "pkg/controller/config", "pkg/printable", "pkg/idsource"},
		"a kind never imports another kind"},
	{"pkg/controller/sessionjob", []string{"pkg/apis/...", "pkg/client/...", "pkg/controller/kindpass", "pkg/controller/lifecycle",
		"pkg/controller/fsm", "pkg/controller/jobstate", "pkg/controller/snapshots", "pkg/controller/watch", "pkg/controller/guardian",
		"pkg/controller/ledger", "pkg/controller/jobs", "pkg/controller/checkpointbook", "pkg/controller/clusters", "pkg/controller/loop",
		"pkg/controller/jars", "pkg/controller/flink/...", "pkg/controller/k8", "pkg/controller/config", "pkg/printable", "pkg/idsource"},
		"a kind never imports another kind"},
	{"pkg/cli/convert", []string{"pkg/apis/..."}, "converting manifests knows the API types of both operators, nothing of a cluster"},
	{"pkg/cli/migrate", []string{"pkg/apis/...", "pkg/client/...", "pkg/printable"},
		"moving a job reads and writes objects of both operators through the API server, nothing of the operator"},
	{"pkg/cli", []string{"pkg/apis/...", "pkg/client/...", "pkg/printable", "pkg/cli/convert", "pkg/cli/migrate"},
		"kubectl flink talks to the API server, never to the operator's packages"},
	{"pkg/controller/flinkapplication", []string{"pkg/apis/...", "pkg/client/...", "pkg/printable", "pkg/idsource", "pkg/controller/autoscaler",
		"pkg/controller/autoscaling",
		"pkg/controller/checkpointbook", "pkg/controller/clusters", "pkg/controller/config", "pkg/controller/flink/...", "pkg/controller/fsm",
		"pkg/controller/guardian", "pkg/controller/jars", "pkg/controller/jobs", "pkg/controller/jobstate", "pkg/controller/k8", "pkg/controller/ledger",
		"pkg/controller/kindpass", "pkg/controller/lifecycle", "pkg/controller/loop", "pkg/controller/snapshots", "pkg/controller/watch"},
		"a kind never imports another kind, the operator's wiring (pkg/operator), the CLI or the test harnesses"},
	{"pkg/...", []string{"pkg/..."}, "the operator's packages never import the test harnesses (integ/) or commands"},
}

// matches tells whether the package p (relative to the module) matches the pattern.
func matches(pattern, p string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == prefix || strings.HasPrefix(p, prefix+"/")
	}
	return p == pattern
}

// ruleOf is the first rule whose pattern matches the package; nil when none does.
func ruleOf(p string) *rule {
	for i := range rules {
		if matches(rules[i].pattern, p) {
			return &rules[i]
		}
	}
	return nil
}

func main() {
	out, err := exec.Command("go", "list", "-deps=false", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "./pkg/...", "./cmd/...").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "go list:", err)
		os.Exit(2)
	}
	var broken []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		p, ok := strings.CutPrefix(fields[0], module)
		if !ok || strings.HasPrefix(p, "pkg/client/") {
			continue
		}
		r := ruleOf(p)
		if r == nil {
			continue
		}
		for _, d := range fields[1:] {
			dep, ok := strings.CutPrefix(d, module)
			if !ok || dep == p || matches("pkg/client/...", dep) && allowsClient(r) {
				continue
			}
			if !allowed(r, dep) {
				broken = append(broken, fmt.Sprintf("%s depends on %s: %s (rule %q)", p, dep, r.why, r.pattern))
			}
		}
	}
	sizes, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Dir}} {{join .GoFiles \" \"}}", "./pkg/...").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "go list:", err)
		os.Exit(2)
	}
	var pkgs []packageFiles
	for _, line := range strings.Split(strings.TrimSpace(string(sizes)), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		p, _ := strings.CutPrefix(fields[0], module)
		pkgs = append(pkgs, packageFiles{path: p, dir: fields[1], files: fields[2:]})
	}
	big, err := oversized(pkgs, lineCount)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	broken = append(broken, big...)
	if len(broken) > 0 {
		sort.Strings(broken)
		fmt.Println("import rule broken:")
		for _, b := range broken {
			fmt.Println("  " + b)
		}
		os.Exit(1)
	}
	fmt.Println("import rule: ok")
}

func allowed(r *rule, dep string) bool {
	for _, a := range r.allowed {
		if matches(a, dep) {
			return true
		}
	}
	return false
}

// allowsClient tells whether the rule lets its packages use the generated API client.
func allowsClient(r *rule) bool {
	for _, a := range r.allowed {
		if matches(a, "pkg/client/x") || a == "pkg/..." {
			return true
		}
	}
	return false
}
