package fsm

import (
	"fmt"
	"sort"
	"strings"
)

// Drawn is what the docs draw of a kind's state machine: its phase table, its phases in the order
// the docs list them, the transitions made before any handler runs, and how an object ends.
type Drawn[P any] struct {
	Table     map[Phase]Spec[P]
	Listed    []string
	Global    []Exit
	EndOfLife string
}

// Diagram renders the table as a Mermaid state diagram, so the docs are generated from the one
// place where phases meet their handlers and cannot drift from it.
func Diagram[P any](d Drawn[P]) string {
	order := func(p string) int {
		for i, q := range d.Listed {
			if q == p {
				return i
			}
		}
		return len(d.Listed)
	}
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	b.WriteString("    [*] --> New\n")
	var phases []string
	for p := range d.Table {
		phases = append(phases, string(p))
	}
	sort.Slice(phases, func(i, j int) bool { return order(phases[i]) < order(phases[j]) })
	for _, p := range phases {
		for _, e := range d.Table[Phase(p)].Exits {
			fmt.Fprintf(&b, "    %s --> %s: %s\n", p, e.To, e.When)
		}
	}
	for _, g := range d.Global {
		fmt.Fprintf(&b, "    note right of %s: any phase goes to %s when %s\n", g.To, g.To, g.When)
	}
	fmt.Fprintf(&b, "    Deleting --> [*]: %s\n", d.EndOfLife)
	return b.String()
}

// Rows describes each listed phase: where it moves and whether it has a deadline, for the docs.
func Rows[P any](d Drawn[P]) [][3]string {
	var rows [][3]string
	for _, p := range d.Listed {
		spec, ok := d.Table[Phase(p)]
		if !ok {
			rows = append(rows, [3]string{p, "not handled yet", ""})
			continue
		}
		var exits []string
		for _, e := range spec.Exits {
			exits = append(exits, fmt.Sprintf("%s (%s)", e.To, e.When))
		}
		bounded := "none"
		if spec.Deadline != nil {
			bounded = "yes (operator config)"
		}
		if spec.Progress != nil {
			bounded = "yes, without progress (operator config)"
		}
		rows = append(rows, [3]string{p, strings.Join(exits, "; "), bounded})
	}
	return rows
}

// GlobalExits are the transitions the machine makes before any handler runs (Machine.Step), which
// every kind's diagram draws.
var GlobalExits = []Exit{
	{To: PhaseDeleting, When: "deletion requested"},
}
