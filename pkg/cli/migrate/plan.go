package migrate

import (
	"context"
	"time"
)

// plan decides, before anything is changed, whether the object can be migrated and how: the
// record the first write will carry, and the object it will become. Everything that could stop the
// migration after the job is stopped (the conversion, the target's name, a session job's cluster)
// is checked here, while the job still runs.
func (m *migration) plan(ctx context.Context, a apacheObject) (*record, *target, error) {
	switch {
	case a.u.GetDeletionTimestamp() != nil:
		return nil, nil, refuse("%s is being deleted", a)
	case a.kind == FlinkDeployment && !a.hasJob():
		return nil, nil, refuse("%s is a session cluster (no spec.job): it has no job to move. Migrate its FlinkSessionJobs; "+
			"convert the cluster itself with kubectl flink convert", a)
	case a.ownedByBlueGreen() != "":
		return nil, nil, refuse("%s belongs to FlinkBlueGreenDeployment %s, which would bring its job back: migrate does not move blue/green deployments",
			a, a.ownedByBlueGreen())
	}
	r := &record{
		Target:   a.kind.Target + "/" + a.u.GetName(),
		Original: jobSettings{State: a.text("spec", "job", "state"), UpgradeMode: a.text("spec", "job", "upgradeMode")},
	}
	if a.upgradeMode() == upgradeStateless {
		if !m.req.AllowStateless {
			return nil, nil, refuse("%s has spec.job.upgradeMode %s: the Apache operator keeps no state across a suspend, so the new job would start empty. "+
				"Pass --allow-stateless to accept that, or set spec.job.upgradeMode savepoint on it (with a savepoint directory, "+
				"execution.checkpointing.savepoint-dir or state.savepoints.dir) to move its state", a, orNone(r.Original.UpgradeMode))
		}
		r.Stateless = true
	}
	state, mode, found, err := a.reconciledJob()
	if err != nil {
		return nil, nil, refuse("%v", err)
	}
	if !found {
		return nil, nil, refuse("%s has not been deployed by the Apache operator (status.reconciliationStatus.lastReconciledSpec is empty): "+
			"there is no job to move; convert it with kubectl flink convert instead", a)
	}
	m.sayf("%s: spec.job.state %s, upgradeMode %s; status.jobStatus.state %s, lifecycleState %s",
		a, a.desiredState(), a.upgradeMode(), orNone(a.jobState()), orNone(a.lifecycle()))
	if tool := a.syncedBy(); tool != "" {
		m.sayf("warning: %s is applied by %s: set spec.job.state suspended in its source before its next sync (or stop syncing it), "+
			"or the sync sets it running again and the Apache operator starts the job beside flinkfsm's", a.short(), tool)
	}
	snapshots, err := snapshotsOf(ctx, m.Apache, a)
	if err != nil {
		return nil, nil, refuse("%v", err)
	}
	switch {
	case state == jobSuspended && a.desiredState() == jobSuspended:
		if err := m.alreadySuspended(a, r, snapshots, mode); err != nil {
			return nil, nil, err
		}
	case a.desiredState() == jobSuspended:
		return nil, nil, refuse("%s has spec.job.state suspended, but status.reconciliationStatus.lastReconciledSpec still has job.state %s: "+
			"the Apache operator is stopping it. Run the same command again once it has", a, state)
	default:
		if err := runningJob(a, state); err != nil {
			return nil, nil, err
		}
		now := m.Clock.Now().UTC()
		r.Step, r.RequestedAt, r.Before = stepSuspendRequested, &now, baselineOf(a, snapshots)
	}
	t, err := m.convert(a, r.Original, r.Savepoint)
	if err != nil {
		return nil, nil, refuse("%v; nothing was changed", err)
	}
	m.sayf("converted %s to %s", a.short(), t)
	m.warn(t)
	found2, err := m.existing(ctx, t)
	if err != nil {
		return nil, nil, refuse("%v", err)
	}
	if found2 != nil {
		made := "not by a migration of it"
		if found2.meta().Annotations[FromUIDAnnotation] == string(a.u.GetUID()) {
			made = "by an earlier migration of it, whose record has been removed"
		}
		return nil, nil, refuse("%s exists already (%s): migrate creates the object itself, from the savepoint it proves; "+
			"nothing was changed", t, made)
	}
	if err := m.checkSessionCluster(ctx, t); err != nil {
		return nil, nil, err
	}
	return r, t, nil
}

// runningJob refuses a job the Apache operator is not running steadily: a suspend now would act on
// a spec the operator has not reconciled, or on a job that is not there to take a savepoint of.
func runningJob(a apacheObject, reconciled string) error {
	switch {
	case a.observedGeneration() != a.u.GetGeneration():
		return refuse("%s has a spec change the Apache operator has not reconciled (metadata.generation %d, status.observedGeneration %d): "+
			"wait until it has, then run the same command again", a, a.u.GetGeneration(), a.observedGeneration())
	case a.reconcileState() != reconcileDeployed && a.reconcileState() != "ROLLED_BACK":
		return refuse("%s is being changed by the Apache operator (status.reconciliationStatus.state %s): wait until it is DEPLOYED, then run the same command again",
			a, orNone(a.reconcileState()))
	case reconciled != jobRunning:
		return refuse("%s: status.reconciliationStatus.lastReconciledSpec has job.state %s", a, reconciled)
	case a.jobState() != flinkRunning:
		return refuse("%s: the job is %s, not RUNNING (status.jobStatus.state), so no savepoint can be taken of it, and no savepoint it "+
			"records is proven its newest state: status.jobStatus.upgradeSavepointPath and savepointInfo.lastSavepoint are only proven "+
			"when a suspend with upgradeMode savepoint recorded them. Get the job RUNNING on the Apache operator, then run the same command again",
			a, orNone(a.jobState()))
	}
	return nil
}

// alreadySuspended plans the migration of a job the Apache operator suspended before: nothing is
// asked of it, and the savepoint it recorded then is used only if the record proves it the newest
// state, as a suspend the migration asked for would have to.
func (m *migration) alreadySuspended(a apacheObject, r *record, snapshots []stateSnapshot, mode string) error {
	r.AlreadySuspended, r.Step = true, stepCreating
	v := judge(a, snapshots, r)
	if v.outcome != proven {
		hint := "Resume it (spec.job.state running) and run the same command again: the migration then stops it with a savepoint itself"
		if mode == upgradeLastState {
			hint = "It was suspended with upgradeMode last-state: its newest state is its last checkpoint, which the Apache operator " +
				"does not record in its status. " + hint
		}
		return refuse("%s is suspended already, and what it records does not prove which state is newest: %s. %s", a, v.why, hint)
	}
	r.Savepoint, r.ProvenBy = v.savepoint, v.provenBy
	if v.savepoint != "" {
		at := v.at.UTC()
		r.SavepointAt = &at
		m.sayf("%s is suspended already: savepoint %s recorded at %s; job %s (proven by %s)", a.short(), v.savepoint,
			at.Format(time.RFC3339Nano), v.jobState, v.provenBy)
	} else {
		m.sayf("%s is suspended already; job %s; it moves without state (--allow-stateless)", a.short(), v.jobState)
	}
	return nil
}
