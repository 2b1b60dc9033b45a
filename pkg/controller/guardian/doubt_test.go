package guardian

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// A job with a savepoint in doubt has no known newest state, unless Flink has just listed its
// completed savepoints.
func TestASavepointInDoubtLeavesAJobWithoutAKnownNewestState(t *testing.T) {
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	j := Job{ID: "job", Completed: []jobs.StatePoint{{Path: "file:/cp/job/chk-3", At: at}}}
	assert.Empty(t, j.Doubt(false), "nothing in doubt")
	j.InDoubt = []jobs.Trigger{{ID: "t1", Time: at.Add(time.Second)}}
	assert.Contains(t, j.Doubt(false), "t1")
	assert.Empty(t, j.Doubt(true), "Flink listed the job's savepoints")
	assert.Equal(t, "file:/cp/job/chk-3", j.Floor().Path, "the floor is what is known")
}
