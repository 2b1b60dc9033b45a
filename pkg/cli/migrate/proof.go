package migrate

import (
	"fmt"
	"slices"
	"time"
)

// verdict is what the Apache object's status says of the suspend the migration asked for.
type verdict struct {
	outcome outcome
	// why says which fields decided, in words a refusal or a wait can print.
	why string
	// savepoint, once proven: its path, when the operator says it was taken, the fields that
	// proved it, and the job's state.
	savepoint string
	at        time.Time
	provenBy  string
	jobState  string
}

type outcome int

const (
	// waiting: the Apache operator has not finished the suspend; look again.
	waiting outcome = iota
	// proven: the job is stopped and the savepoint (none for a stateless job) is its newest state.
	proven
	// unprovable: the job stopped, but what is recorded does not prove which state is newest.
	unprovable
	// failed: the Apache operator reports that the savepoint failed.
	failed
)

func wait(format string, args ...interface{}) verdict {
	return verdict{outcome: waiting, why: fmt.Sprintf(format, args...)}
}

func cannotProve(format string, args ...interface{}) verdict {
	return verdict{outcome: unprovable, why: fmt.Sprintf(format, args...)}
}

// judge reads the Apache object's status, and its FlinkStateSnapshots, against what the record
// says was there before the suspend was asked for. It accepts a savepoint only when:
//   - status.reconciliationStatus.lastReconciledSpec has job.state suspended with upgradeMode
//     savepoint, reconciled (state DEPLOYED, observedGeneration current, lifecycleState SUSPENDED)
//     after the request (reconciliationTimestamp past the recorded one);
//   - status.jobStatus.state is a terminal state of Flink's: the job no longer runs;
//   - status.jobStatus.upgradeSavepointPath names a savepoint not recorded before, and the record
//     the Apache operator writes in the same step agrees: savepointInfo.lastSavepoint with
//     triggerType UPGRADE or, with snapshot resources on, a new FlinkStateSnapshot labelled
//     snapshot.trigger-type UPGRADE with that path;
//   - nothing recorded since (another savepoint, a checkpoint, the job's startTime) is as new as it.
func judge(a apacheObject, snapshots []stateSnapshot, r *record) verdict {
	before := r.Before
	if before == nil {
		before = &baseline{}
	}
	state, mode, found, err := a.reconciledJob()
	if err != nil {
		return cannotProve("%v", err)
	}
	if e := a.statusError(); e != "" && state != jobSuspended && digest(e) != before.ErrorDigest {
		oe := parseOperatorError(e)
		if oe.aboutSavepoint() {
			return verdict{outcome: failed, why: fmt.Sprintf("the Apache operator reports in status.error: %s", oe)}
		}
		return wait("the Apache operator reports in status.error: %s (it retries)", oe)
	}
	if d := a.desiredState(); d != jobSuspended {
		return cannotProve("spec.job.state of %s is %s again: something set it back after the migration asked for the suspend", a, d)
	}
	switch {
	case !found || state != jobSuspended:
		return wait("status.reconciliationStatus.lastReconciledSpec has job.state %s: the Apache operator has not acted on the suspend yet", orNone(state))
	case a.reconcileState() != reconcileDeployed:
		return wait("status.reconciliationStatus.state is %s, not DEPLOYED", orNone(a.reconcileState()))
	case a.observedGeneration() < a.u.GetGeneration():
		return wait("status.observedGeneration %d is behind metadata.generation %d", a.observedGeneration(), a.u.GetGeneration())
	case a.lifecycle() != "" && a.lifecycle() != lifecycleSuspend:
		return wait("status.lifecycleState is %s, not SUSPENDED", a.lifecycle())
	case !terminalJobStates[a.jobState()]:
		return wait("status.jobStatus.state is %s: the job has not stopped", orNone(a.jobState()))
	case !r.AlreadySuspended && a.reconciledAt() <= before.ReconciledAt:
		return cannotProve("status.reconciliationStatus.reconciliationTimestamp %d is not after the one recorded before the request (%d)",
			a.reconciledAt(), before.ReconciledAt)
	}
	if r.Stateless {
		return verdict{outcome: proven, jobState: a.jobState(), provenBy: "status.reconciliationStatus.lastReconciledSpec (job.state suspended), status.jobStatus.state"}
	}
	if mode != upgradeSavepoint {
		return cannotProve("status.reconciliationStatus.lastReconciledSpec has job.upgradeMode %s: the Apache operator stopped the job without a savepoint "+
			"(it falls back to last-state when the job is not running), so no recorded savepoint is proven its newest state", mode)
	}
	path := a.upgradeSavepointPath()
	switch {
	case path == "" || path == lastStatePlaceholder:
		return cannotProve("status.jobStatus.upgradeSavepointPath is %s: the Apache operator recorded no savepoint for the suspend", orNone(path))
	case !r.AlreadySuspended && path == before.UpgradeSavepointPath:
		return cannotProve("status.jobStatus.upgradeSavepointPath %s is the one recorded before the request", path)
	}
	v := corroborate(a, snapshots, before, path)
	if v.outcome != proven {
		return v
	}
	if why := newerThan(a, snapshots, before, v); why != "" {
		return cannotProve("%s; the savepoint %s (%s) cannot be proven the newest state", why, path, v.provenBy)
	}
	v.jobState = a.jobState()
	return v
}

// corroborate finds the record the Apache operator writes with upgradeSavepointPath when a
// suspend takes a savepoint (AbstractJobReconciler.setUpgradeSavepointPath): a new
// savepointInfo.lastSavepoint of trigger type UPGRADE or, with snapshot resources on instead, a new
// FlinkStateSnapshot labelled UPGRADE.
func corroborate(a apacheObject, snapshots []stateSnapshot, before *baseline, path string) verdict {
	if last := a.lastSavepoint(); last != nil && last.Location == path && last.TriggerType == triggerUpgrade &&
		!slices.Contains(before.Savepoints, path) && last.At > before.ReconciledAt {
		return verdict{outcome: proven, savepoint: path, at: time.UnixMilli(last.At),
			provenBy: "status.jobStatus.upgradeSavepointPath and savepointInfo.lastSavepoint (triggerType UPGRADE)"}
	}
	var found []stateSnapshot
	for _, s := range snapshots {
		if s.Trigger == triggerUpgrade && !s.Checkpoint && s.Path == path && !slices.Contains(before.Snapshots, s.Name) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return cannotProve("status.jobStatus.upgradeSavepointPath %s is recorded neither in status.jobStatus.savepointInfo.lastSavepoint "+
			"(triggerType UPGRADE, after the request) nor by a FlinkStateSnapshot labelled %s=UPGRADE created since", path, snapshotTriggerLabel)
	case 1:
		return verdict{outcome: proven, savepoint: path, at: found[0].Created,
			provenBy: fmt.Sprintf("status.jobStatus.upgradeSavepointPath and FlinkStateSnapshot %s (%s=UPGRADE)", found[0].Name, snapshotTriggerLabel)}
	}
	return cannotProve("FlinkStateSnapshots %s and %s both record the suspend's savepoint", found[0].Name, found[1].Name)
}

// newerThan names anything recorded since the request that is not older than the savepoint: a
// second savepoint, a checkpoint, or a start of the job. Any of them could hold newer state.
func newerThan(a apacheObject, snapshots []stateSnapshot, before *baseline, v verdict) string {
	at := v.at
	for _, s := range a.recordedSavepoints() {
		if s.Location == v.savepoint || slices.Contains(before.Savepoints, s.Location) {
			continue
		}
		if !time.UnixMilli(s.At).Before(at) {
			return fmt.Sprintf("status.jobStatus.savepointInfo also records savepoint %s (triggerType %s, timeStamp %s), not older",
				s.Location, orNone(s.TriggerType), time.UnixMilli(s.At).UTC().Format(time.RFC3339Nano))
		}
	}
	if c := a.lastCheckpointAt(); c > before.LastCheckpointAt && !time.UnixMilli(c).Before(at) {
		return fmt.Sprintf("status.jobStatus.checkpointInfo.lastCheckpoint.timeStamp %s is not older",
			time.UnixMilli(c).UTC().Format(time.RFC3339Nano))
	}
	for _, s := range snapshots {
		if s.Path == v.savepoint || slices.Contains(before.Snapshots, s.Name) || !s.completed() {
			continue
		}
		// creationTimestamp has whole seconds: the snapshot is older only if the second after it is.
		if s.Created.Add(time.Second).After(at) {
			what := "savepoint"
			if s.Checkpoint {
				what = "checkpoint"
			}
			return fmt.Sprintf("FlinkStateSnapshot %s records a %s %s created %s, not older", s.Name, what, orNone(s.Path),
				s.Created.UTC().Format(time.RFC3339))
		}
	}
	if started := a.startedAt(); started > 0 && time.UnixMilli(started).After(at) {
		return fmt.Sprintf("status.jobStatus.startTime %s is after the savepoint: the job ran after it",
			time.UnixMilli(started).UTC().Format(time.RFC3339Nano))
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
