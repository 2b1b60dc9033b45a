package fsm

import (
	"testing"
	"time"

	stdconfig "github.com/flyteorg/flytestdlib/config"
	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

func TestAPhaseMayMoveOnlyWhereItsExitsSay(t *testing.T) {
	s := Spec[int]{Exits: []Exit{{To: PhaseRunning, When: "job ran stable"}}}
	assert.True(t, s.Allows(PhaseRunning))
	assert.False(t, s.Allows(PhaseDeployFailed))
}

func TestBackoffDoublesUpToItsCap(t *testing.T) {
	cfg := &config.Config{BaseBackoffDuration: stdconfig.Duration{Duration: time.Second}, MaxBackoffDuration: stdconfig.Duration{Duration: 5 * time.Second}}
	var got []time.Duration
	for n := int32(1); n <= 4; n++ {
		got = append(got, Backoff(cfg, n))
	}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second}, got)
}

func TestTheDiagramListsPhasesInTheDocsOrder(t *testing.T) {
	d := Drawn[int]{
		Table: map[Phase]Spec[int]{
			PhaseRunning: {Exits: []Exit{{To: PhaseDeleting, When: "deleted"}}},
			PhaseNew:     {Exits: []Exit{{To: PhaseRunning, When: "started"}}, Deadline: func(int) time.Duration { return time.Minute }},
		},
		Listed:    []string{"New", "Running", "Suspended"},
		Global:    []Exit{{To: PhaseDeleting, When: "deletion requested"}},
		EndOfLife: "finalizer removed",
	}
	assert.Equal(t, "stateDiagram-v2\n    [*] --> New\n    New --> Running: started\n    Running --> Deleting: deleted\n"+
		"    note right of Deleting: any phase goes to Deleting when deletion requested\n    Deleting --> [*]: finalizer removed\n", Diagram(d))
	assert.Equal(t, [][3]string{
		{"New", "Running (started)", "yes (operator config)"},
		{"Running", "Deleting (deleted)", "none"},
		{"Suspended", "not handled yet", ""},
	}, Rows(d))
}
