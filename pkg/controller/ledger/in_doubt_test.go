package ledger

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// A savepoint is in doubt while its end is not known: in flight, or unknowable once Flink lost its
// job. One Flink failed, one completed, and a checkpoint the operator triggered are not.
func TestASavepointIsInDoubtUntilFlinkSaysHowItEnded(t *testing.T) {
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	inFlight := l.Ask(v1beta1.SavepointManual, "job", "c", false, t0)
	assert.Len(t, l.InDoubt("job"), 1, "in flight")
	Unknowable(inFlight, "Flink no longer knows job job", t0.Add(time.Minute))
	assert.Equal(t, []string{inFlight.TriggerID}, triggerIDs(l.InDoubt("job")), "its end cannot be known")
	assert.Empty(t, l.InDoubt("other"), "a job's own savepoints only")

	failed := l.Ask(v1beta1.SavepointUpgrade, "job2", "c", true, t0)
	Fail(failed, "savepoint of job job2 failed: disk full", t0)
	done := l.Ask(v1beta1.SavepointSuspend, "job2", "c", true, t0)
	Complete(done, "s3://sp/2", t0, t0)
	checkpoint := l.Ask(v1beta1.ManualCheckpoint, "job2", "c", false, t0)
	Unknowable(checkpoint, "Flink no longer knows job job2", t0)
	assert.Empty(t, l.InDoubt("job2"), "Flink's word, or a checkpoint, leaves no doubt")

	old := l.Ask(v1beta1.SavepointPeriodic, "job3", "c", false, t0)
	Fail(old, goneBefore, t0)
	assert.Len(t, l.InDoubt("job3"), 1, "as older operator versions recorded a JobManager gone before the result was read")
}

func triggerIDs(ts []jobs.Trigger) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}
