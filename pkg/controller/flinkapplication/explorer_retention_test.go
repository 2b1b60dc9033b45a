package flinkapplication

import (
	"fmt"
	"strings"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// Checkpoint retention in explorer runs. The operator renders RETAIN_ON_CANCELLATION unless the
// spec says otherwise, and a user may say otherwise: DELETE_ON_CANCELLATION loses a job's
// checkpoints when it is cancelled, NO_EXTERNALIZED_CHECKPOINTS (Flink's own default) whenever it
// ends. Runs of seeds from retentionSeeds on change it as one of an application's Flink settings;
// earlier seeds draw exactly as before, so that their replays (explorer_regressions_test.go) run
// the runs they were written for.
const retentionSeeds = 10_000_000

var retentionPolicies = []string{flink.RetainOnCancellation, "DELETE_ON_CANCELLATION", "NO_EXTERNALIZED_CHECKPOINTS"}

// variesRetention tells whether the run changes applications' checkpoint retention.
func (x *explorer) variesRetention() bool { return x.seed >= retentionSeeds }

// changeCheckpointRetention sets an application's checkpoint retention policy.
func (x *explorer) changeCheckpointRetention(id *identity) string {
	policy := retentionPolicies[x.rng.IntN(len(retentionPolicies))]
	x.edit(id, func(s *v1beta1.FlinkApplicationSpec) { s.FlinkConfig[flink.CheckpointRetentionKey] = policy }, nil)
	return fmt.Sprintf("%s flinkConfig %s %s", id.name, flink.CheckpointRetentionKey, policy)
}

// discardedAsItFailed tells whether the checkpoint at path, of job j, was discarded by Flink as the
// job FAILED (its retention policy keeps none then): the job FAILED and none of its checkpoints is
// left on storage, which only that discard does (subsumption keeps the newest). Nobody can restore
// it, and what replaces the job starts from the newest state that is left. The explorer may never
// have seen the checkpoint: one taken and discarded within a step is known from status only. A job
// that was cancelled is not excused: the operator cancels jobs, and must keep their state through
// it (a savepoint when the policy does not retain checkpoints on cancel).
func (x *explorer) discardedAsItFailed(j flinksim.JobRecord, path string) bool {
	if len(j.States) == 0 || j.States[len(j.States)-1].State != "FAILED" || !strings.Contains(path, "/"+j.JobID+"/chk-") {
		return false
	}
	for _, s := range x.w.storage.Snapshots() {
		if s.JobID == j.JobID && !s.Savepoint {
			return false
		}
	}
	return true
}
