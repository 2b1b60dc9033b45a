package flinkapplication

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// Defects the explorer (explorer_test.go) found, each reduced to a world test of its own. A test
// skipped here fails on the code it was found on; the skip names the seed that found it.

// An update whose spec goes back to the running one while the stop's savepoint is taken (Dual mode)
// ends its stop with the old cluster as the target: a job is started there, and a further change
// of the spec then starts another job on a new cluster while the first one runs on. Never two live
// jobs of one application.
func TestASpecChangedBackDuringTheStopAndThenAgainRunsOneJobAtATime(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	w.runUntilPhase("wc", v1beta1.PhaseSavepointing)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:1" })
	w.runUntil("wc", "a job started again on the old cluster", func(*v1beta1.FlinkApplication) bool {
		return len(w.timeline.Jobs(ns+"/wc")) == 2
	})
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Parallelism = 4 })
	w.runUntil("wc", "running the new spec", func(a *v1beta1.FlinkApplication) bool {
		return a.Status.Phase == v1beta1.PhaseRunning && a.Status.JobStatus.State == v1beta1.JobRunning
	})
	w.passes("wc", 20)
	w.assertOneJobAtATime(w.events())
}

// Deleting a FlinkSnapshot with disposeOnDelete disposes of its savepoint even while other
// FlinkSnapshots show the same savepoint: the one that took it, and one a user registered with
// spec.keep, which retention never touches. The storage of a state any FlinkSnapshot of the
// namespace still shows stays.
func TestDeletingAFlinkSnapshotKeepsTheSavepointAnotherFlinkSnapshotShows(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	path, taken := takeSavepoint(t, w, "wc", "one")
	w.createSnapshot("kept", func(s *v1beta1.FlinkSnapshotSpec) { s.Path, s.Keep = path, true })
	w.createSnapshot("twin", func(s *v1beta1.FlinkSnapshotSpec) { s.Path, s.DisposeOnDelete = path, true })
	w.passes("wc", 5)
	require.Contains(t, w.snapshot("twin").Finalizers, snapshots.DisposeFinalizer)
	w.deleteSnapshot("twin")
	w.passes("wc", 10)
	require.NotNil(t, w.snapshot("kept"))
	require.NotNil(t, w.snapshot(taken))
	assert.True(t, w.storage.Exists(path), "FlinkSnapshots kept (spec.keep) and %s still show %s", taken, path)
}

// replaySeed runs an explorer seed that once broke an invariant for the steps it took to break it
// (seeds replay exactly: TestExplorerReplaysASeedExactly) and fails on any violation. The seeds
// replayed so were found before the explorer ran Flink HA, and run without it, as they were found;
// replayHASeed runs one found with it.
func replaySeed(t *testing.T, seed uint64, steps int) {
	t.Helper()
	replaySeedHA(t, seed, steps, false)
}

func replayHASeed(t *testing.T, seed uint64, steps int) {
	t.Helper()
	replaySeedHA(t, seed, steps, true)
}

func replaySeedHA(t *testing.T, seed uint64, steps int, ha bool) {
	t.Helper()
	x := newExplorerHA(t, seed, ha)
	for x.steps < steps && len(x.violations) == 0 {
		x.step()
	}
	if len(x.violations) > 0 {
		t.Fatalf("%s", x.report())
	}
}

// Seed 3024: a session job's pass that made its running job the stable one disposed of the
// savepoint the previous stable job started from (its FlinkSnapshot deleted with disposeOnDelete)
// before the status write that stopped naming it: the stored status still named it.
func TestExplorerSeed3024NothingGoesThatTheStoredStatusNames(t *testing.T) {
	replaySeed(t, 3024, 1890)
}

// Seed 4002: a LastState session job whose JobManager lost it restarted from its checkpoint, not
// from the savepoint completed 1.3 s later: status kept both times to the second, and the tie went
// to the entry listed first.
func TestExplorerSeed4002StatesOfOneSecondAreOrderedToTheMillisecond(t *testing.T) {
	replaySeed(t, 4002, 1280)
}

// Seed 4045: a LastState update restored from the checkpoint Flink listed at the stop, newer than
// the one recorded; the update failed, the user redeployed from a savepoint of their choice, that
// failed too, and the rollback restored the stable job's recorded checkpoint: older than the one
// the first update had started from.
func TestExplorerSeed4045ARollbackRestoresNothingOlderThanAnEarlierRestoreAfterTheSameJob(t *testing.T) {
	replaySeed(t, 4045, 505)
}

// Seed 4308: an update with a savepointRedeployNonce stopped the stable job with a savepoint and
// started from the savepoint the user named. The stable record no longer named its job, so when the
// user deleted the stop's FlinkSnapshot with disposeOnDelete, nothing kept its savepoint: the
// rollback after the redeploy failed then restored an older checkpoint. What a rollback restores is
// kept.
func TestExplorerSeed4308WhatARollbackRestoresIsKept(t *testing.T) {
	replaySeed(t, 4308, 345)
}

// Seed 4633: a new BlueGreen version to start from a checkpoint of the deployed version's job
// waited two minutes in Submitting (the FlinkSnapshot its spec named had been deleted), and was
// then submitted from that checkpoint, which the deployed job, running on, had subsumed meanwhile.
func TestExplorerSeed4633ANewVersionStartsFromTheRunningJobsNewestCheckpoint(t *testing.T) {
	replaySeed(t, 4633, 1425)
}

// Seed 3024 again: the FlinkSnapshot deleted with disposeOnDelete in the pass that stopped naming
// its savepoint kept the savepoint for good (its finalizer went, the storage stayed). Needed only
// by the status as stored, it keeps its finalizer, and a later pass disposes of the savepoint.
func TestExplorerSeed3024ASnapshotDeletedAsItsSavepointIsReleasedIsDisposedOfAfterTheWrite(t *testing.T) {
	x := newExplorerHA(t, 3024, false)
	for x.steps < 1890 && len(x.violations) == 0 {
		x.step()
	}
	require.Empty(t, x.violations)
	const snapshot, path = "sj1-upgrade-e2e6b4c9", "file:/checkpoints/savepoints/savepoint-abf320-45ff19692506"
	for i := 0; i < 10; i++ {
		x.pass()
	}
	for _, s := range x.w.snapshots() {
		assert.NotEqual(t, snapshot, s.Name, "FlinkSnapshot %s is gone", snapshot)
	}
	assert.False(t, x.w.storage.Exists(path), "its savepoint was disposed of")
	assert.Empty(t, x.violations)
}

// Seed 1030027 (a checker fix): a session job's JobManager restarted, losing the job, and the job
// started again from the checkpoint its status recorded, which Flink had subsumed ten seconds
// before. The one pass of the job in those ten seconds was killed at its status write, so the
// newer checkpoint it saw died with the process: a pass killed before its status write counts as
// none that could record.
func TestExplorerSeed1030027APassKilledAtItsStatusWriteRecordsNothing(t *testing.T) {
	replaySeed(t, 1030027, 344)
}

// Seed 1040059: a FlinkSnapshot deleted with disposeOnDelete named the savepoint an application's
// spec still named for a redeploy, pending by its status as stored (the stable job stopped for an
// update); the pass that made the new job stable disposed of it before its status write. What the
// stored status has pending keeps the savepoint until the write, and a later pass disposes of it.
func TestExplorerSeed1040059ASpecPathPendingByTheStoredStatusIsKeptUntilTheWrite(t *testing.T) {
	replaySeed(t, 1040059, 2994)
}

// Seed 1050076: a savepoint for an update completed as its JobManager was lost, so the operator
// never learned its end (in doubt) and refused to restore anything older. The user then redeployed
// from another savepoint, which failed; going back from it restored an older checkpoint of the job
// before, under the savepoint that may have completed. The rollback now ends in DeployFailed
// saying which savepoint is in doubt.
func TestExplorerSeed1050076ARollbackFromAFailedRedeployRestoresNothingUnderASavepointInDoubt(t *testing.T) {
	replaySeed(t, 1050076, 1576)
}

// Seed 1060111: a manual savepoint of a session job completed while Flink failed to tell the job's
// checkpoints, so it was recorded as taken when its completion was read, after a checkpoint Flink
// completed later than the savepoint. The job was then lost with its JobManager, and its restart
// took the savepoint for the newer state. A savepoint's completion now waits for Flink's word on
// when it was taken (its entry in the job's checkpoint history), until the deadline is near.
func TestExplorerSeed1060111ASavepointIsOrderedByWhenFlinkTookIt(t *testing.T) {
	replaySeed(t, 1060111, 1466)
}

// Seed 70042: a BlueGreen application resumed while its new job's status was unreadable stayed in
// Submitting for nine minutes while the job ran and checkpointed (chk-57, in the ledger); past the
// deadline the attempt was ended, the rollback failed (the stable job was suspended) and it rested
// Suspended, and the next resume restored the savepoint of the suspend before, seventeen minutes
// older than chk-57. Ending an attempt whose checkpoints Flink cannot tell now takes the newest state
// the operator recorded of it.
func TestExplorerSeed70042AFailedAttemptLeavesTheNewestStateRecordedOfIt(t *testing.T) {
	replaySeed(t, 70042, 2341)
}

// Seed 90062: alpha's cluster never got its TaskManagers ready, and operator restarts kept its start
// within its bound (a deadline for each step its pods can take and one more). A restartNonce came; the
// pass deleted the starting cluster and was killed writing the move to Updating, so status still
// said ClusterStarting, and the checker, which read the bound's pods off the Deployments left, gave
// the phase 5 minutes. The operator did nothing wrong: its next pass moves on. The checker now
// remembers the most pods the phase's clusters asked for.
func TestExplorerSeed90062AStartKeepsItsBoundWhenAKilledPassDeletedItsCluster(t *testing.T) {
	replaySeed(t, 90062, 4317)
}

// Seed 70046: an update's attempt failed after checkpointing chk-40 on its own cluster; the
// rollback restarted the stable spec from chk-40, which Flink named but the ledger did not hold.
// A redeploy from another application's savepoint then failed, and going back from it restored
// chk-39, the stable cluster's older state: the stable record said it started from chk-40, but
// with no time for it the older, timed chk-39 looked newest. The attempt's checkpoint a rollback
// takes is now recorded with Flink's time.
func TestExplorerSeed70046AFailedRedeployGoesBackToTheNewestStateOfTheRestartedStableJob(t *testing.T) {
	replaySeed(t, 70046, 2907)
}

// Seed 90042: gamma's manual savepoint completed (taken 13:14:40.3) while the pass that read it was
// killed before its status write, and the JobManager Deployment was deleted as the user set a
// savepointRedeployNonce. The restart in place ran the stable spec again from chk-378 (taken
// 13:14:32.7), older than the savepoint in doubt: the pending redeploy had been let stand in for the
// doubt, but it names the state of the update after the restart, not the restarted job's.
func TestExplorerSeed90042ARestartInPlaceIsNotExcusedFromASavepointInDoubtByAPendingRedeploy(t *testing.T) {
	replaySeed(t, 90042, 1774)
}

// Seed 1090055: delta's job, started without state, took a savepoint (12:09:02.1) after chk-53
// (12:08:57.9), which the checkpoint book recorded; its TaskManagers were lost, Flink restored chk-53
// on its own, and jobStatus dated that restore by Flink's restore time (12:09:08). When its
// JobManager was lost, the restart took chk-53 at the restore's time for newer than the savepoint.
func TestExplorerSeed1090055AStateAJobRestoredOnItsOwnIsDatedByWhenItWasTaken(t *testing.T) {
	replaySeed(t, 1090055, 393)
}

// Seed 1090039: gamma (BlueGreen) was taking the deployed job's savepoint for a new version when
// the explorer ran no pass of it for two minutes; Flink subsumed the checkpoint the operator had
// recorded, then the deployed version's JobManager lost the job, and the new version started from
// the recorded checkpoint, which Flink no longer had. No pass could have recorded a newer one, which
// invariant 2 excuses, but the check took an earlier new version's job, which failed beside the
// deployed one and was rolled back long before that checkpoint was taken, for a job that had started
// since from other state.
func TestExplorerSeed1090039AVersionOverBeforeTheCheckpointWasTakenDoesNotEndItsLineOfRestores(t *testing.T) {
	replaySeed(t, 1090039, 3358)
}

// Seed 140309: gamma (BlueGreen) started a new version from the deployed job's savepoint; it did
// not become ready in time, and its rollback gave up with the new version's job unreadable and the
// deployed job lost, naming the new version's chk-133 as "the previous job's state". A suspend then
// stopped the deployed job, chose its own newest chk-127, and the resume started the new version's
// spec on its cluster from it. The deployed job goes on from its own state (docs/blue-green.md):
// a rollback whose stable job was never stopped names no attempt's state, and a BlueGreen version
// given up before its promotion is no predecessor, as a torn-down one is not.
func TestExplorerSeed140309AGivenUpBlueGreenVersionLeavesTheDeployedJobsStateAsTheNewest(t *testing.T) {
	replaySeed(t, 140309, 1193)
}

// Seed 200040 (with Flink HA): session job sj1 submitted its job to the session cluster, which runs
// with HA, and was suspended by its user before the job ran; the session cluster's JobManager
// Deployment was deleted that moment. handleSessionSubmitting took the JobManager gone for the job
// gone ("the session cluster went away before the job ran") and moved to WaitingForCluster, where
// the suspend cleared the target and rested in Suspended, "no job runs". But the session cluster
// created its JobManager again under the same hash, and HA recovered the job: it ran on unseen for
// ten minutes, and when the user resumed sj1 (by then on another cluster, HA turned off) a second
// job ran beside it. With HA, a JobManager gone is no job gone while the cluster comes back under
// the same hash: the submitted job is waited for and followed, or stopped, before Suspended.
func TestExplorerSeed200040ASessionJobSubmittedToAnHAClusterIsNotGoneWithItsJobManager(t *testing.T) {
	replayHASeed(t, 200040, 991)
}

// Seed 170083 (with Flink HA): the JobManager Deployment of the HA session cluster was deleted while
// sj1's job ran; the session job took the job for lost and waited for the cluster with no job
// recorded, HA recovered the job when the cluster came back under the same hash, and deleting sj1
// with deleteMode Savepoint then found no job to stop: it was gone with its job still running. A
// running session job waits for what HA brings back while its cluster's JobManager is gone.
func TestExplorerSeed170083ARunningSessionJobWaitsForHAToBringItsJobBack(t *testing.T) {
	replayHASeed(t, 170083, 1058)
}

// Seed 1210598: gamma redeployed from another object's savepoint; the new job ran for four minutes
// with its status unreadable, completing chk-56, and was given up (RollingBack). Ending the attempt
// of a redeploy set the next restore to the previous job's chk-2 and never asked Flink for the
// attempt's checkpoints; the user changed the image during the rollback, and the update that took
// over started from chk-2, four minutes behind what the job it replaced had completed. Giving up
// on a redeploy that ran goes on from what it completed, as giving up on any update does; only a
// redeploy that completed nothing goes back to the previous job's state.
func TestExplorerSeed1210598AFailedRedeployThatCompletedStateIsNotRewound(t *testing.T) {
	replaySeed(t, 1210598, 1104)
}

// Seed 1210633 (with Flink HA): the JobManager Deployment of the HA session cluster was deleted as
// sj2's update cancelled its job. The pass judged the job stopped (its JobManager and all its pods
// gone) and Cancelling went on from chk-48; the session cluster created the JobManager again under
// the same hash and HA recovered the job, and the update ran a second job beside it. Only Running
// knew that HA brings a session cluster's jobs back; the pass now knows it for every handler.
func TestExplorerSeed1210633ASessionJobsCancelWaitsForTheJobHABringsBack(t *testing.T) {
	replayHASeed(t, 1210633, 1010)
}

// Seed 9000160: sj1's job ran in Submitting, completed chk-1 (recorded, as a session job's job in
// Submitting now is) and FAILED before it ran stable; the session job rested in DeployFailed, and
// the next spec's job started without state, from what the failed job had started from. A job that
// ran and failed goes on from the newest checkpoint Flink kept of it (goOnFromFailedJob).
func TestExplorerSeed9000160TheNextJobGoesOnFromWhatAFailedSessionJobCompleted(t *testing.T) {
	replaySeed(t, 9000160, 285)
}

// Seed 424218: as seed 9000160, after an update: sj2's job restored chk-11, completed chk-12 in
// Submitting and FAILED; the next spec's job started from chk-11 again.
func TestExplorerSeed424218AnUpdateAfterAFailedSubmissionGoesOnFromItsCheckpoint(t *testing.T) {
	replaySeed(t, 424218, 1028)
}

// Seeds from 10,000,000 on vary checkpoint retention; each of these failed on 3c647a7, the first
// code they ran on, with a restore of a checkpoint Flink had discarded, or an older one than the
// cancel of a job under a retention policy that does not keep checkpoints through a cancel
// destroyed:
//   - 10000102: a LastState update that also set RETAIN_ON_CANCELLATION cancelled a job running
//     with NO_EXTERNALIZED_CHECKPOINTS as if its checkpoints survived (runConfigOfJob);
//   - 10000110, 11000088, 11000127: a failed savepoint's recovery cancelled the job, whose policy
//     discards checkpoints on cancel, and went back to an older savepoint (cancelDiscards);
//   - 11000014, 11000110, 11000131: a job that ended under NO_EXTERNALIZED_CHECKPOINTS was
//     started again from its discarded newest checkpoint (withoutDiscardedCheckpoints, and Flink's
//     discarded flag in jobs.AskFlinkState).
func TestExplorerRetentionSeedsRestoreOnlyCheckpointsThatSurvivedTheirJobsEnd(t *testing.T) {
	for _, r := range []struct {
		seed  uint64
		steps int
	}{{10000102, 1253}, {10000110, 769}, {11000088, 683}, {11000127, 1034}, {11000014, 1495}, {11000110, 1212}, {11000131, 1252}} {
		t.Run(fmt.Sprint(r.seed), func(t *testing.T) { replaySeedHA(t, r.seed, r.steps, haWorld(r.seed)) })
	}
}

// Seed 11000118 (HA off): sj1's job, in Submitting, had chk-69 recorded; Flink subsumed it while
// sj1 had no pass, and the JobManager process was lost. The job was submitted again under its own
// id from chk-69, which Flink refused as missing, and after the next spec change from chk-69 again.
// A state Flink could not find is marked gone in the ledger: nothing starts from it again, and
// nothing older stands in for it (TestAStateFlinkCouldNotFindIsNeverOfferedAgain).
func TestExplorerSeed11000118(t *testing.T) {
	replaySeed(t, 11000118, 528)
}

// Seed 11000401 (with Flink HA): BlueGreen gamma's deployed job FAILED; the restore choice judged its
// checkpoints by the retention policy the operator had recorded for it and left out chk-89, which
// Flink had kept, going back to an older savepoint. Flink's word on a checkpoint it answers for
// (discarded or not) now comes before the recorded policy, which only judges what Flink cannot
// tell. Seed 11000339 (HA, BlueGreen gamma) was the simulator's: gamma's job FAILED under
// NO_EXTERNALIZED_CHECKPOINTS after two HA recoveries, and Flink discards every checkpoint the job
// retained then, but the simulator discarded only those its last JobManager process took, and the
// checker, seeing older ones left, took the discard of chk-95 for the operator's loss. A JobManager
// that recovers a job with HA now holds its retained checkpoints (flinksim recoverRetained).
func TestExplorerSeed11000401FlinksWordOnACheckpointComesBeforeTheRecordedPolicy(t *testing.T) {
	replayHASeed(t, 11000401, 1139)
}

func TestExplorerSeed11000339(t *testing.T) {
	replayHASeed(t, 11000339, 1066)
}

// Seed 11000453 (with Flink HA): sj1 followed the job Flink 2.3 ran its application again under;
// at the next failover the JobManager knew neither that job's id nor an application of that id
// while the application, of the first job's id, ran again. The job was taken for gone and sj1
// submitted another on the session cluster's new Flink cluster: two jobs. The record names the
// application a followed job runs in (applicationID), and a JobManager that does not know the job is
// asked about that application.
func TestExplorerSeed11000453(t *testing.T) {
	replayHASeed(t, 11000453, 799)
}

// Seed 10000772: beta's job, under NO_EXTERNALIZED_CHECKPOINTS and savepointRetention keep 1, had a
// savepoint taken for FlinkSnapshot user-3; a manual savepoint failed after it, and retention let
// the completed one go from the ledger for the failed one. The job FAILED, its checkpoints went
// with it, and the next update started from an older savepoint. Retention keeps each recorded job's
// newest savepoint, and failed savepoints count apart (ledger.Trim).
func TestExplorerSeed10000772(t *testing.T) {
	replaySeed(t, 10000772, 1175)
}

// Seed 11000067 (with Flink HA): the session cluster's spec turned HA off while its Flink cluster's
// JobManager was gone; sj1 took its job for gone once the new cluster ran and submitted another
// there, and when the spec turned HA back on the old cluster came back and HA recovered the first
// job beside it (TestASessionJobWaitsForItsJobWhileFlinkHADataOfItsClusterIsLeft).
func TestExplorerSeed11000067(t *testing.T) {
	replayHASeed(t, 11000067, 3168)
}

// Seed 10000122: alpha's job ran under NO_EXTERNALIZED_CHECKPOINTS with a manual savepoint newer
// than the state it started from; retention by age retired that savepoint's FlinkSnapshot, and the
// guardian, protecting only the job's newest state (a checkpoint), let it be disposed of. The job
// FAILED, its checkpoints went with it, and the suspend's recovery went back to the older savepoint
// (TestRetentionByAgeKeepsTheRunningJobsNewestSavepoint).
func TestExplorerSeed10000122(t *testing.T) {
	replaySeed(t, 10000122, 4978)
}

// Seed 11000153 (with Flink HA): sj2's job restored a checkpoint newer than the one the operator had
// recorded when its JobManager failed over, and FAILED before it completed another; Flink had
// subsumed the recorded one. The suspend after it kept the recorded checkpoint, and the resume
// failed: Flink's statistics named the newer one only as restored (jobstate.Job.RestoredAtFailover).
func TestExplorerSeed11000153(t *testing.T) {
	replayHASeed(t, 11000153, 1782)
}

// Seed 10000241 (with Flink HA): gamma's BlueGreen first deploy was given up on while its job
// restarted every ten seconds; the job ran on, its id dropped, on the cluster left behind, and the
// delete with deleteMode Savepoint let the application go while that job still ran
// (TestADeleteWaitsForTheJobManagerOfAClusterLeftByADeployGivenUpOn).
func TestExplorerSeed10000241(t *testing.T) {
	replayHASeed(t, 10000241, 3961)
}

// Seed 13000489 (with Flink HA): gamma's new BlueGreen version was to start from a savepoint taken
// beside the deployed job, which completed a checkpoint after it and then FAILED before the new
// version's job was sent (a fifth of the requests to its JobManager failed meanwhile). The new
// version replaced a job that was over and went back behind that checkpoint; it starts from the
// deployed job's newest state instead (deployedJobOver).
func TestExplorerSeed13000489(t *testing.T) {
	replayHASeed(t, 13000489, 98)
}

// Seed 12000336: as seed 13000489, without Flink HA.
func TestExplorerSeed12000336(t *testing.T) {
	replaySeed(t, 12000336, 834)
}

// Seeds 13000260 and 11000294: gamma's new BlueGreen version started from a checkpoint of the
// deployed job (its savepoint had failed); that job was torn down under NO_EXTERNALIZED_CHECKPOINTS,
// and Flink discarded the checkpoint with it. The new version's job failed with its own checkpoints
// discarded too, and its recovery sent a job to restore the deleted checkpoint. The teardown marks
// it gone (discardedWithVersion), and the recovery says the state is lost instead.
func TestExplorerSeed13000260(t *testing.T) {
	replaySeed(t, 13000260, 1334)
}

func TestExplorerSeed11000294(t *testing.T) {
	replaySeed(t, 11000294, 1721)
}

// Seed 12000329 (with Flink HA), a fault of the explorer's: beta's pass recorded a newer checkpoint
// and was killed at its own status write, after it had written a FlinkSnapshot's status. The
// explorer took the pass for one that had persisted what it learnt, and blamed the restore from
// the checkpoint recorded before, which Flink had subsumed meanwhile (ownStatus).
func TestExplorerSeed12000329(t *testing.T) {
	replayHASeed(t, 12000329, 1335)
}

// Seed 17001851 (with Flink HA), a fault of the explorer's: gamma was deleted with deleteMode None
// while a BlueGreen update was under way; the JobManager of the cluster it left running crashed and
// Flink HA recovered the job there, as Flink does on a cluster left alone. The explorer took the
// recovery for a namesake's cluster adopting the job; it counts as such only once a namesake exists
// (leftAlone).
func TestExplorerSeed17001851(t *testing.T) {
	replayHASeed(t, 17001851, 1115)
}

// Seed 20000000: gamma's new BlueGreen version was to start from a savepoint of the deployed job,
// which completed checkpoints after it; the deployed job's JobManager stopped telling its status,
// then crashed without Flink HA. The new version's job was sent from the savepoint while Flink
// could not say whether the deployed job still ran, and went back behind its recorded checkpoints
// (TestANewBlueGreenVersionIsNotSentWhileFlinkCannotSayWhetherTheDeployedJobRuns).
func TestExplorerSeed20000000(t *testing.T) {
	replaySeed(t, 20000000, 598)
}

// Seed 23000498: gamma's new BlueGreen version started from a checkpoint of the deployed job (its
// savepoint failed), ran beside it, was promoted, and FAILED; its own checkpoints went with it (no
// externalized retention). The deployed job, torn down minutes later, had long since subsumed the
// checkpoint the new version started from, and the next update sent a job from it, which Flink
// refused, again at every update after (startBorrowedBeside).
func TestExplorerSeed23000498(t *testing.T) {
	replaySeed(t, 23000498, 1098)
}

// Seed 27000113 (Flink HA on): session job sj2 was redeployed from a savepoint of alpha's, and its
// tasks failed before any checkpoint completed; the user deleted sj2 with deleteMode None, which
// leaves the job running on the session cluster. Nothing then named the savepoint the job would
// restart from, and alpha's retention disposed of it under the running job
// (TestASavepointAJobLeftByDeleteModeNoneRunsFromIsKept).
func TestExplorerSeed27000113(t *testing.T) {
	replayHASeed(t, 27000113, 964)
}

// Seed 32000603 (Flink HA on): beta's job FAILED under NO_EXTERNALIZED_CHECKPOINTS, which discards
// its checkpoints as it ends, and status said FAILED; its JobManager then restarted and forgot the
// job. The pass that found the job lost sent it again from its recorded checkpoint, which Flink
// refused, and beta rested in DeployFailed
// (TestAFailedJobsDiscardedCheckpointsAreNotRestoredOnceItsJobManagerForgetsIt).
func TestExplorerSeed32000603(t *testing.T) {
	replayHASeed(t, 32000603, 1457)
}

// Seed 34000468: gamma's new BlueGreen version was to start from a savepoint of the deployed job,
// which completed a checkpoint after it; the deployed job's JobManager Deployment was then
// deleted before the new version's job was sent. A savepoint asked of the deployed job earlier was
// in doubt, so the restore policy could not name the job's newest state, and the new version was
// sent from the older savepoint anyway, behind the recorded checkpoint (deployedJobOver).
func TestExplorerSeed34000468(t *testing.T) {
	replaySeed(t, 34000468, 1217)
}

// Seed 38000557: with the restore policy reading a job's end from status recorded in an earlier
// pass, delta's job was taken for ended discarding its checkpoints, which still existed, and the
// job started again from the state the job before it started from, a checkpoint gone since
// 12:04:17.9.
func TestExplorerSeed38000557(t *testing.T) {
	replaySeed(t, 38000557, 1208)
}

// Seed 57002531: an HA application's suspend took its job for stopped when the JobManager
// Deployment went during the stop, and deleted the cluster with the job's HA data left; the resume
// created the same cluster, HA ran the job again, and a spec change submitted a second job beside
// it (TestAnHAApplicationsSuspendStopsTheJobHABringsBackWhenItsJobManagerGoes).
func TestExplorerSeed57002531AnHAApplicationsJobIsNotGoneWithItsJobManager(t *testing.T) {
	replayHASeed(t, 57002531, 1345)
}

// Seed 62000064 (Flink HA off): a deleted FlinkSnapshot's savepoint, the newest state its job's
// status held, was disposed of because the checkpoint book had noted a newer checkpoint; the
// operator was killed before the book's page took it, the job was lost with its JobManager, and it
// started again from a checkpoint older than the savepoint. What may go is judged by what status
// and the book's page hold (jobstate.Job.NewestWrittenStatePath).
func TestExplorerSeed62000064NoStateGoesForABookEntryNotWrittenYet(t *testing.T) {
	replaySeedHA(t, 62000064, 187, false)
}

// Seed 67000854 (Flink HA off): a savepoint the job completed while the operator had not yet learned
// its result (its ledger entry still pending, no path) was disposed of when a FlinkSnapshot naming
// that path was deleted; once the result came in, it was the job's newest state, and the next job
// was started from it, gone. A pending savepoint or checkpoint of an owner's job holds every state
// Flink would name for it (guardian.References.Pending).
func TestExplorerSeed67000854APendingSavepointsStateIsNotDisposedOfBeforeItsResultIsKnown(t *testing.T) {
	replaySeedHA(t, 67000854, 1214, false)
}
