package flinkapplication

import "testing"

// Seed 51000261 (Flink HA on): beta's JobManager failed over and recovered its job from chk-13,
// which jobStatus.restorePath then named as the state the job started from; the job's newer
// checkpoints subsumed it. The job FAILED under NO_EXTERNALIZED_CHECKPOINTS, which discarded its
// checkpoints, and a later update started the next job from chk-13, long gone: a job's own
// checkpoint it restored at a failover goes with the discard of its checkpoints.
func TestExplorerSeed51000261AJobsOwnRestoredCheckpointGoesWithItsDiscardedCheckpoints(t *testing.T) {
	replayHASeed(t, 51000261, 1062)
}
