package flinkapplication

import "testing"

// Seed 47000232 (Flink HA off): a manual savepoint, sent 34 s after it was asked for while a fifth
// of gamma's calls failed, was read completed while the checkpoint statistics failed, and counted
// as taken then: after chk-17, which Flink took 32 s after the savepoint. The JobManager restarted
// and the job went back to the savepoint. A savepoint Flink does not date is ordered only against
// checkpoints older than its trigger (ledger.Ledger.CompleteSavepoint).
func TestExplorerSeed47000232ASavepointIsNeverDatedAfterACheckpointFlinkTookLater(t *testing.T) {
	replaySeed(t, 47000232, 531)
}

// Seed 47000405 (Flink HA on): the JobManager failed over while the upgrade's savepoint with cancel
// completed; the trigger, sent again to the JobMaster that took the job over, failed, and that was
// taken for the savepoint's end. The recovery restored chk-34, older than the savepoint. A
// trigger that JobMaster never got is in doubt, and its silence settles nothing (jobs.FlinkAnswer.Covers).
func TestExplorerSeed47000405ASavepointLostInAFailoverIsInDoubt(t *testing.T) {
	replayHASeed(t, 47000405, 733)
}

// Seed 49000041 (Flink HA on): as seed 47000405, with the trigger sent again while the JobMaster that
// took the job over was still starting it and listed no checkpoint: nothing is sent again until the
// job's details say which JobMaster runs it.
func TestExplorerSeed49000041ATriggerIsNotSentAgainToAJobMasterThatTookTheJobOver(t *testing.T) {
	replayHASeed(t, 49000041, 910)
}
