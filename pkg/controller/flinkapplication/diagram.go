package flinkapplication

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// PhaseDiagram renders the phase table as a Mermaid state diagram, so the docs are generated from the
// one place where phases meet their handlers and cannot drift from it.
func PhaseDiagram() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	b.WriteString("    [*] --> New\n")
	var phases []string
	for p := range phaseTable {
		phases = append(phases, string(p))
	}
	sort.Slice(phases, func(i, j int) bool { return order(phases[i]) < order(phases[j]) })
	for _, p := range phases {
		spec := phaseTable[v1beta1.FlinkApplicationPhase(p)]
		for _, e := range spec.exits {
			fmt.Fprintf(&b, "    %s --> %s: %s\n", p, e.to, e.when)
		}
	}
	for _, g := range globalExits {
		fmt.Fprintf(&b, "    note right of %s: any phase goes to %s when %s\n", g.to, g.to, g.when)
	}
	b.WriteString("    Deleting --> [*]: job handled per deleteMode, finalizer removed\n")
	return b.String()
}

// PhaseTable describes each phase's deadline and where it gives up to, for the docs.
func PhaseTable() [][3]string {
	var rows [][3]string
	for _, p := range v1beta1.Phases {
		spec, ok := phaseTable[p]
		if !ok {
			rows = append(rows, [3]string{string(p), "not handled yet", ""})
			continue
		}
		var exits []string
		for _, e := range spec.exits {
			exits = append(exits, fmt.Sprintf("%s (%s)", e.to, e.when))
		}
		bounded := "none"
		if spec.deadline != nil {
			bounded = "yes (operator config)"
		}
		rows = append(rows, [3]string{string(p), strings.Join(exits, "; "), bounded})
	}
	return rows
}

func order(p string) int {
	for i, q := range v1beta1.Phases {
		if string(q) == p {
			return i
		}
	}
	return len(v1beta1.Phases)
}
