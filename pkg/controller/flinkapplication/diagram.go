package flinkapplication

import (
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessioncluster"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessionjob"
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
	switch kind {
	case sessioncluster.KindName:
		return fsm.Diagram(sessioncluster.Drawn())
	case sessionjob.KindName:
		return fsm.Diagram(sessionjob.Drawn())
	}
	return fsm.Diagram(drawn(kind))
}

// PhaseTable describes each phase of a kind: where it moves and whether it has a deadline, for the docs.
func PhaseTable(kind string) [][3]string {
	switch kind {
	case sessioncluster.KindName:
		return fsm.Rows(sessioncluster.Drawn())
	case sessionjob.KindName:
		return fsm.Rows(sessionjob.Drawn())
	}
	return fsm.Rows(drawn(kind))
}
