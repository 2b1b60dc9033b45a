package kindpass

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/loop"
)

// Metrics are the operator's Prometheus series: the loop's about passes and the queue, and the
// machine's about phases.
type Metrics struct {
	Loop   *loop.Metrics
	Phases *fsm.Metrics
}

// NewMetrics registers the loop's and the state machine's series with reg; a nil reg keeps them
// unregistered.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	return &Metrics{Loop: loop.NewMetrics(reg), Phases: fsm.NewMetrics(reg)}
}

// LoopMetrics are the loop's series, nil when there are none.
func (m *Metrics) LoopMetrics() *loop.Metrics {
	if m == nil {
		return nil
	}
	return m.Loop
}

// phaseMetrics are the machine's series, nil when there are none.
func (m *Metrics) phaseMetrics() *fsm.Metrics {
	if m == nil {
		return nil
	}
	return m.Phases
}
