package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessioncluster"
)

// DiagramKinds are the kinds whose state machines the docs draw, in the order they are drawn.
var DiagramKinds = func() []string {
	var out []string
	for _, k := range kinds {
		out = append(out, k.name)
	}
	return out
}()

// drawn is what the docs draw of a kind this package's pass runs.
func drawn(kind string) fsm.Drawn[*Context] {
	k := kindNamed(kind)
	return fsm.Drawn[*Context]{Table: k.table(), Listed: k.phases, Global: fsm.GlobalExits, EndOfLife: k.endOfLife}
}

// PhaseDiagram renders a kind's phase table as a Mermaid state diagram (fsm.Diagram).
func PhaseDiagram(kind string) string {
	if kind == sessioncluster.KindName {
		return fsm.Diagram(sessioncluster.Drawn())
	}
	return fsm.Diagram(drawn(kind))
}

// PhaseTable describes each phase of a kind: where it moves and whether it has a deadline, for the docs.
func PhaseTable(kind string) [][3]string {
	if kind == sessioncluster.KindName {
		return fsm.Rows(sessioncluster.Drawn())
	}
	return fsm.Rows(drawn(kind))
}
