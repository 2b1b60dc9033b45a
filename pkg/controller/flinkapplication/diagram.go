package flinkapplication

import (
	"fmt"
	"sort"
	"strings"
)

// DiagramKinds are the kinds whose state machines the docs draw, in the order they are drawn.
var DiagramKinds = func() []string {
	var out []string
	for _, k := range kinds {
		out = append(out, k.name)
	}
	return out
}()

// tableOf is a kind's phase table and its phases in the order the docs list them.
func tableOf(kind string) (map[Phase]phaseSpec, []string) {
	k := kindNamed(kind)
	return k.table(), k.phases
}

// PhaseDiagram renders a kind's phase table as a Mermaid state diagram, so the docs are generated
// from the one place where phases meet their handlers and cannot drift from it.
func PhaseDiagram(kind string) string {
	table, listed := tableOf(kind)
	order := func(p string) int {
		for i, q := range listed {
			if q == p {
				return i
			}
		}
		return len(listed)
	}
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	b.WriteString("    [*] --> New\n")
	var phases []string
	for p := range table {
		phases = append(phases, string(p))
	}
	sort.Slice(phases, func(i, j int) bool { return order(phases[i]) < order(phases[j]) })
	for _, p := range phases {
		for _, e := range table[Phase(p)].exits {
			fmt.Fprintf(&b, "    %s --> %s: %s\n", p, e.to, e.when)
		}
	}
	for _, g := range globalExits {
		fmt.Fprintf(&b, "    note right of %s: any phase goes to %s when %s\n", g.to, g.to, g.when)
	}
	fmt.Fprintf(&b, "    Deleting --> [*]: %s\n", kindNamed(kind).endOfLife)
	return b.String()
}

// PhaseTable describes each phase of a kind: where it moves and whether it has a deadline, for the docs.
func PhaseTable(kind string) [][3]string {
	table, listed := tableOf(kind)
	var rows [][3]string
	for _, p := range listed {
		spec, ok := table[Phase(p)]
		if !ok {
			rows = append(rows, [3]string{p, "not handled yet", ""})
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
		if spec.progress != nil {
			bounded = "yes, without progress (operator config)"
		}
		rows = append(rows, [3]string{p, strings.Join(exits, "; "), bounded})
	}
	return rows
}
