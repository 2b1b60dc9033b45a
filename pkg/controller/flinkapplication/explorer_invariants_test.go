package flinkapplication

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// The explorer's invariants, checked after every step (and a disposal as it is asked for):
//  1. never two live jobs of one object (a BlueGreen object: never three), and no job of an object
//     deleted with deleteMode Savepoint or ForceCancel runs on after the object is gone;
//  2. no job starts from older state than the newest completed state of the job it replaces, nor
//     from state that was gone by then, unless its user named that state;
//  3. no durable state is disposed of while anything references it;
//  4. no object stays in a phase past its deadline without a Warning;
//  5. one pass makes at most maxRESTCallsPerPass calls and spends at most maxPassTime of simulated
//     time;
//  6. and 7. what Flink HA keeps (explorer_ha_test.go).

const (
	// maxRESTCallsPerPass bounds one pass's calls: the autoscaler's sample may spend 64
	// (autoscaling/sampling.go), the job's observation and one operation a few more.
	maxRESTCallsPerPass = 96
	// maxPassTime bounds the simulated time one pass spends waiting for JobManagers.
	maxPassTime = time.Minute
	// deadlineSlack is what a phase may outlast its deadline by: passes come every few seconds, and
	// a give-up is written by the pass after the deadline.
	deadlineSlack = 3 * time.Minute
)

// check runs the invariants that hold after every step.
func (x *explorer) check() {
	x.record()
	for _, id := range x.identities {
		if id.kind == sessionClusterKindName {
			continue
		}
		jobs := x.jobsOf(id)
		x.checkOneJobAtATime(id, jobs)
		x.checkRestores(id, jobs)
	}
	x.checkDeadlines()
	x.checkHA()
}

// checkOneJobAtATime is invariant 1.
func (x *explorer) checkOneJobAtATime(id *identity, jobs []flinksim.JobRecord) {
	if id.flavour.blueGreen {
		if n := flinksim.MostAliveOf(jobs); n > 2 {
			x.violate("%s: %d jobs alive at once, a BlueGreen object runs two at most", id, n)
		}
	} else {
		for _, o := range flinksim.Overlapping(jobs) {
			x.violate("%s: two live jobs at once: %s (from %s) and %s (from %s), overlapping from %s", id,
				o.First.JobID, o.First.AliveFrom().Format("15:04:05.0"), o.Second.JobID, o.Second.AliveFrom().Format("15:04:05.0"),
				o.From.Format("15:04:05.0"))
		}
	}
	if id.gone && id.deleteMode != v1beta1.DeleteModeNone {
		for _, j := range jobs {
			if _, ended := j.AliveUntil(); !ended {
				x.violate("%s was deleted with deleteMode %s and is gone, but its job %s still runs", id, id.deleteMode, j.JobID)
			}
		}
	}
}

// checkRestores is invariant 2, for each job the first time it is seen.
func (x *explorer) checkRestores(id *identity, jobs []flinksim.JobRecord) {
	for i, k := range jobs {
		if x.history.restoreChecked[k.JobID] || len(k.States) == 0 {
			continue
		}
		x.history.restoreChecked[k.JobID] = true
		if k.RerunOf != "" {
			// The job it was, recovered by HA under a new id from its newest checkpoint: no
			// replacement of it (explorer_ha_test.go).
			continue
		}
		p := normalPath(k.RestoredFrom)
		if x.namedByUser(id, p) {
			continue
		}
		start := k.AliveFrom()
		before := jobs[:i]
		if id.flavour.blueGreen {
			// A version torn down leaves its state to the user (status.lastTeardown, its
			// FlinkSnapshot), not to the application: the deployed version goes on, and what
			// replaces it starts from its state (docs/blue-green.md: a suspend tears the new version
			// down, then suspends the deployed one). A later job of the torn-down version's spec,
			// on that version's cluster name, replaces the deployed version's job, not the torn-down
			// one. Two versions run on two clusters: a job started again on one cluster replaces
			// that cluster's job, not the other version's. A new version given up before it was
			// promoted is as one torn down (notGivenUp).
			before = x.notTornDown(before)
			before = x.notGivenUp(before, jobs, start)
			before = onJobManager(before, k.JobManager)
		}
		j, alive := predecessor(before, start)
		if p != "" {
			if _, ok := x.history.seen[p]; !ok {
				x.violate("%s: job %s started from %s, a state that never existed", id, k.JobID, k.RestoredFrom)
				continue
			}
			if gone, ok := x.history.vanished[p]; ok && !gone.After(start) && !x.unseenSubsumption(id, p, gone, before, jobs[:i]) {
				x.violate("%s: job %s started at %s from %s, which was gone since %s", id, k.JobID,
					start.Format("15:04:05.0"), k.RestoredFrom, gone.Format("15:04:05.0"))
				continue
			}
		}
		if j == nil {
			continue
		}
		floor := x.floor(id, *j, start, alive)
		if floor != nil && floor.path == normalPath(j.RestoredFrom) && x.namedByUser(id, floor.path) {
			// The job replaced started from a savepoint the user named for a redeploy and completed
			// nothing since: it failed, and going back from a failed redeploy goes to the state the job
			// before it left (docs/job-lifecycle.md), which is the floor instead.
			floor = nil
			if k, ok := indexOf(before, j.JobID); ok {
				if pj, palive := predecessor(before[:k], j.AliveFrom()); pj != nil {
					floor = x.floor(id, *pj, start, palive)
				}
			}
		}
		if floor == nil && x.goneUnseen(id, normalPath(j.RestoredFrom), start) {
			// The job replaced failed at its restore from a checkpoint Flink had subsumed unseen
			// (goneUnseen): the state to keep is the one the job before it left.
			if k, ok := indexOf(before, j.JobID); ok {
				if pj, palive := predecessor(before[:k], j.AliveFrom()); pj != nil {
					floor = x.floor(id, *pj, start, palive)
				}
			}
		}
		if floor == nil {
			continue
		}
		if p == "" {
			x.violate("%s: job %s started without state, but the job it replaces, %s, had completed %s (taken %s)", id,
				k.JobID, j.JobID, floor.path, floor.at.Format("15:04:05.0"))
			continue
		}
		if s := x.history.seen[p]; p != floor.path && x.older(s, floor) {
			x.violate("%s: job %s started from %s (taken %s), older than %s (taken %s), the newest completed state of job %s it replaces",
				id, k.JobID, k.RestoredFrom, s.CreatedAt.Format("15:04:05.0"), floor.path, floor.at.Format("15:04:05.0"), j.JobID)
		}
	}
}

// unseenSubsumption tells whether the restored state is a checkpoint that Flink subsumed while no
// pass of the object could see it: none began between the checkpoint's going (gone, as the
// explorer first saw it) and the end of the job that took it. Without Flink HA the operator
// restores what it last recorded, and it records only what it looks at (docs/job-lifecycle.md,
// "checkpoints in status": an operator that is down when the JobManager is lost records nothing
// meanwhile). The explorer runs one pass at a time, so an operator killed or down, or JobManagers
// slow to answer every pass of seven objects, leave a job unlooked at for longer than Flink keeps
// its checkpoints. A pass that ran in between could have recorded a newer checkpoint, and then the
// restore is the operator's fault, unless Flink failed to tell the job's checkpoints in it
// (explorer_refusals_test.go): a JobManager that fails the first requests of each endpoint, or
// every request for a while, leaves the operator nothing newer to record. The jobs started since
// (before) must all have started from the same checkpoint, and so failed at their restore (one
// that ran completed newer state), or from a state the user named for a redeploy, which a failed
// redeploy goes back from; a job over before the checkpoint was taken is not one of them. The job
// that took the checkpoint is looked for among all the object's jobs (all): a BlueGreen version
// starts from the checkpoint of the other version's job, which ran on the other cluster and is not
// among before.
func (x *explorer) unseenSubsumption(id *identity, p string, gone time.Time, before, all []flinksim.JobRecord) bool {
	s := x.history.seen[p]
	if s.Savepoint {
		return false
	}
	endOfTaker := func() bool {
		for _, j := range all {
			if j.JobID == s.JobID {
				end, ended := j.AliveUntil()
				return ended && !id.couldRecordBetween(s.JobID, gone, end)
			}
		}
		return false
	}
	for i := len(before) - 1; i >= 0; i-- {
		j := before[i]
		if j.JobID == s.JobID {
			end, ended := j.AliveUntil()
			return ended && !id.couldRecordBetween(s.JobID, gone, end)
		}
		if end, ended := j.AliveUntil(); ended && end.Before(s.CreatedAt) {
			// A job that was over before the checkpoint was taken neither started from it nor
			// completed anything newer: a BlueGreen version that failed beside the taker, on a
			// cluster of its own, and was rolled back from before the taker checkpointed on.
			continue
		}
		if x.namedByUser(id, normalPath(j.RestoredFrom)) {
			// A redeploy from a state the user named is a branch of its own: going back from it
			// returns to the state the job before it left (docs/job-lifecycle.md), here the same
			// checkpoint, so it does not end the line of restores from it.
			continue
		}
		if normalPath(j.RestoredFrom) != p {
			return false
		}
	}
	return endOfTaker()
}

// recorded tells whether some status recorded the state p of the job.
func (x *explorer) recorded(jobID, p string) bool {
	for _, k := range x.history.known[jobID] {
		if k.path == p {
			return true
		}
	}
	return false
}

// older tells whether state s is older than the floor. Two states of one job are in the order of
// their checkpoint ids, which Flink gives checkpoints and savepoints from one counter as it injects
// their barriers: a savepoint triggered just before a checkpoint may complete after it, and holds
// the older state. Otherwise the times they were taken are compared.
func (x *explorer) older(s flinksim.Snapshot, floor *knownState) bool {
	if f, ok := x.history.seen[floor.path]; ok && f.JobID == s.JobID && f.CheckpointID > 0 && s.CheckpointID > 0 {
		return s.CheckpointID < f.CheckpointID
	}
	return s.CreatedAt.Before(floor.at)
}

// namedByUser tells whether the user named the state for a restore of the object.
func (x *explorer) namedByUser(id *identity, path string) bool {
	if path == "" {
		return false
	}
	if id.explicit[path] {
		return true
	}
	for name := range id.explicitSnapshots {
		if x.history.snapshotPaths[name][path] {
			return true
		}
	}
	return false
}

// notTornDown are the jobs that were not a BlueGreen version's torn down.
func (x *explorer) notTornDown(jobs []flinksim.JobRecord) []flinksim.JobRecord {
	var out []flinksim.JobRecord
	for _, j := range jobs {
		if !x.history.tornDown[j.JobID] {
			out = append(out, j)
		}
	}
	return out
}

// onJobManager are the jobs that ran on the JobManager, or all of them when none did.
func onJobManager(jobs []flinksim.JobRecord, jm string) []flinksim.JobRecord {
	var out []flinksim.JobRecord
	for _, j := range jobs {
		if j.JobManager == jm {
			out = append(out, j)
		}
	}
	if len(out) == 0 {
		return jobs
	}
	return out
}

// predecessor is the job a job started at start replaces: the newest of those alive then (a
// BlueGreen version starts beside the deployed one), else the one that ended last before.
// indexOf is where the job of that id is in jobs.
func indexOf(jobs []flinksim.JobRecord, jobID string) (int, bool) {
	for i := range jobs {
		if jobs[i].JobID == jobID {
			return i, true
		}
	}
	return 0, false
}

func predecessor(before []flinksim.JobRecord, start time.Time) (j *flinksim.JobRecord, alive bool) {
	var ended *flinksim.JobRecord
	var endedAt time.Time
	for i := range before {
		r := &before[i]
		end, done := r.AliveUntil()
		if !done || end.After(start) {
			j, alive = r, true
			continue
		}
		if ended == nil || !end.Before(endedAt) {
			ended, endedAt = r, end
		}
	}
	if j != nil {
		return j, true
	}
	return ended, false
}

// floor is the newest completed state of job j that a job started at start must not go behind:
// j's savepoints, the checkpoints of j the operator recorded, and the state j started from. A job
// still alive then (a BlueGreen version starts beside the deployed one) goes on processing after
// any of its savepoints, so none of them is a state the new job rewinds: only j's start counts.
// A savepoint no status recorded counts only when a pass of the object began between its
// completion and the end of j: one completed moments before its JobManager was lost, with no
// pass in between, is one the operator never had the chance to learn of (as a checkpoint
// subsumed unseen, unseenSubsumption). A checkpoint Flink subsumed unseen before start is none
// (goneUnseen): no job can start from it.
func (x *explorer) floor(id *identity, j flinksim.JobRecord, start time.Time, alive bool) *knownState {
	var best *knownState
	consider := func(k knownState) {
		if k.at.Before(start) && (best == nil || k.at.After(best.at)) && !x.goneUnseen(id, k.path, start) && !x.discardedAsItFailed(j, k.path) {
			kk := k
			best = &kk
		}
	}
	if !alive {
		end, ended := j.AliveUntil()
		for p, s := range x.history.seen {
			if s.Savepoint && s.JobID == j.JobID && (!ended || x.recorded(j.JobID, p) || id.passedBetween(s.CreatedAt, end)) {
				consider(knownState{path: p, at: s.CreatedAt})
			}
		}
		for _, k := range x.history.known[j.JobID] {
			if !k.since.After(start) {
				consider(k)
			}
		}
	}
	if p := normalPath(j.RestoredFrom); p != "" {
		if s, ok := x.history.seen[p]; ok {
			consider(knownState{path: p, at: s.CreatedAt})
		}
	}
	return best
}

// checkDisposal is invariant 3, run as the operator asks Flink to dispose of path: nothing of the
// namespace may still reference it.
func (x *explorer) checkDisposal(path string) {
	p := normalPath(path)
	x.history.disposed[p] = x.w.clock.Now()
	for _, need := range x.referencesTo(p) {
		x.violate("disposal of %s while %s", path, need)
	}
}

// referencesTo says what of the namespace references the state now.
func (x *explorer) referencesTo(p string) []string {
	ctx := context.Background()
	var out []string
	snaps, _ := x.w.apps.FlinkV1beta1().FlinkSnapshots(ns).List(ctx, metav1.ListOptions{})
	snapshotPath := map[string]string{}
	if snaps != nil {
		for _, s := range snaps.Items {
			snapshotPath[s.Name] = normalPath(s.Status.Path)
			if s.DeletionTimestamp == nil && (normalPath(s.Status.Path) == p || normalPath(s.Spec.Path) == p) {
				out = append(out, fmt.Sprintf("FlinkSnapshot %s (not deleted) shows it", s.Name))
			}
		}
	}
	owner := func(what string, st *v1beta1.JobOwnerStatus, specPath string, nonce v1beta1.Nonce, restoreSnapshot string) {
		fields := map[string]string{"jobStatus.restorePath": st.JobStatus.RestorePath,
			"deployments.nextRestorePath": st.Deployments.NextRestorePath, "finalSavepointPath": st.FinalSavepointPath,
			"savepointPath": st.SavepointPath}
		for _, r := range []*v1beta1.DeploymentRecord{st.Deployments.Stable, st.Deployments.Candidate} {
			if r == nil {
				continue
			}
			fields["the restorePath of the record of job "+r.JobID] = r.RestorePath
			// The operator's newest state of a job is the ledger's or its checkpoint book's, whichever
			// is newer (jobstate.Job.NewestStatePath), and the book is not in status: the ledger's newest counts
			// only while the job has completed nothing since, or a restore may still pick it.
			// A record without a job (stopped, suspended) names no job's newest state: the ledger's
			// entries without a job id are the savepoints a user named for a redeploy, none of them
			// state a job of it completed (the operator's ledger.NewestPath ignores them too).
			if newest, at := newestLedgerState(st, r.JobID); r.JobID != "" && newest != "" && !x.hasStateSince(r.JobID, at) {
				fields["the newest state its ledger records of job "+r.JobID] = newest
			}
		}
		if snapshots.PendingSpecPath(specPath, v1beta1.Nonce(nonce), st) != "" {
			fields["its spec (a restore still to come)"] = specPath
		}
		if restoreSnapshot != "" && snapshotPath[restoreSnapshot] == p {
			fields["its spec.restoreSnapshot "+restoreSnapshot] = p
		}
		for field, v := range fields {
			if v != "" && normalPath(v) == p {
				out = append(out, fmt.Sprintf("%s names it in %s", what, field))
			}
		}
	}
	if apps, err := x.w.apps.FlinkV1beta1().FlinkApplications(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, a := range apps.Items {
			owner("FlinkApplication "+a.Name, &a.Status.JobOwnerStatus, a.Spec.SavepointPath, a.Spec.SavepointRedeployNonce, a.Spec.RestoreSnapshot)
		}
	}
	if sjs, err := x.w.apps.FlinkV1beta1().FlinkSessionJobs(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, j := range sjs.Items {
			owner("FlinkSessionJob "+j.Name, &j.Status.JobOwnerStatus, j.Spec.Job.InitialSavepointPath, j.Spec.Job.SavepointRedeployNonce,
				j.Spec.Job.RestoreSnapshot)
		}
	}
	for _, id := range x.identities {
		if id.kind == sessionClusterKindName {
			continue
		}
		for _, j := range x.jobsOf(id) {
			if _, ended := j.AliveUntil(); ended || normalPath(j.RestoredFrom) != p {
				continue
			}
			if !x.hasStateSince(j.JobID, j.AliveFrom()) {
				out = append(out, fmt.Sprintf("job %s of %s runs from it and has completed no state since", j.JobID, id))
			}
		}
	}
	return out
}

// newestLedgerState is the newest completed state the ledger records of the job, and when it was
// taken.
func newestLedgerState(st *v1beta1.JobOwnerStatus, jobID string) (string, time.Time) {
	var best *v1beta1.StateEntry
	for i := range st.Ledger {
		e := &st.Ledger[i]
		if e.JobID != jobID || e.Result != v1beta1.StateCompleted || e.Path == "" || e.Time == nil {
			continue
		}
		if best == nil || e.Time.After(best.Time.Time) {
			best = e
		}
	}
	if best == nil {
		return "", time.Time{}
	}
	return best.Path, best.Time.Time
}

// hasStateSince tells whether the job completed a checkpoint or savepoint after since.
func (x *explorer) hasStateSince(jobID string, since time.Time) bool {
	for _, s := range x.w.storage.Snapshots() {
		if s.JobID == jobID && s.CreatedAt.After(since) {
			return true
		}
	}
	return false
}

// checkPassBounds is invariant 5.
func (x *explorer) checkPassBounds(what string, calls int64, spent time.Duration) {
	x.passRESTCalls = max(x.passRESTCalls, calls)
	x.passTime = max(x.passTime, spent)
	if calls > maxRESTCallsPerPass {
		x.violate("a pass of %s made %d REST calls (at most %d)", what, calls, maxRESTCallsPerPass)
	}
	if spent > maxPassTime {
		x.violate("a pass of %s spent %s of simulated time (at most %s)", what, spent, maxPassTime)
	}
}

// phaseDeadlines are the phase table's deadlines (phase_table.go, sessionjob/table.go, sessioncluster/table.go) under the
// world's configuration, the longest a phase may take where it depends on the object.
func (x *explorer) phaseDeadline(phase string) (time.Duration, bool) {
	c := x.w.env.Config
	switch Phase(phase) {
	case PhaseClusterStarting:
		return c.ClusterStartTimeout.Duration, true
	case PhaseWaitingForCluster:
		// A session job waits for its cluster as long as it takes, but says so past a cluster
		// start's deadline (sayWaitingForCluster).
		return c.ClusterStartTimeout.Duration, true
	case PhaseSubmitting, PhaseRescaling:
		return c.ReadinessTimeout.Duration, true
	case PhaseRollingBack:
		return c.ClusterStartTimeout.Duration + c.ReadinessTimeout.Duration + c.CancelTimeout.Duration, true
	case PhaseTeardown:
		return c.SavepointTimeout.Duration + c.CancelTimeout.Duration, true
	case PhaseSavepointing:
		return c.SavepointTimeout.Duration, true
	case PhaseCancelling, PhaseRecovering:
		return c.CancelTimeout.Duration, true
	case PhaseNew, PhaseUpdating:
		// No deadline of their own, but retries with backoff: never longer than the longest chain.
		return c.ClusterStartTimeout.Duration + c.ReadinessTimeout.Duration + c.CancelTimeout.Duration, true
	}
	return 0, false
}

// checkDeadlines is invariant 4.
func (x *explorer) checkDeadlines() {
	now := x.w.clock.Now()
	for _, id := range x.live() {
		phase, started, why := x.phaseOf(id)
		if started == nil || strings.Contains(why, "waits for task slots") {
			// A session job waits for slots on a full session cluster as long as it takes
			// (sessionSubmitDeadline): that is no failure of the job, and its Ready condition says so.
			continue
		}
		deadline, ok := x.phaseDeadline(phase)
		pods := 0
		if Phase(phase) == PhaseClusterStarting {
			pods = x.mostPods(id, started.Time)
		}
		if x.restartedSince(started.Time) {
			// A new process counts the deadline from its own first pass; the phase's wall-clock
			// bound is its deadline and the allowance for outages and restarts (machine.go), and a
			// starting cluster's is a deadline for each step its pods can take and one more
			// (boundOfStart).
			if Phase(phase) == PhaseClusterStarting {
				deadline *= time.Duration(stepsPerPod*pods + 1)
			} else {
				deadline += fsm.OutageAllowance
			}
		}
		if !ok || now.Sub(started.Time) <= deadline+deadlineSlack || !id.lastWarning.Before(started.Time) ||
			!passedSince(id.passes, started.Add(deadline)) {
			continue
		}
		x.violate("%s has been in phase %s since %s, past its deadline of %s, without a Warning", id, phase,
			started.Format("15:04:05.0"), deadline)
	}
}

// passedSince tells whether one of the passes began at or after t. A give-up is written by a
// pass, and the explorer picks the object of each pass at random: behind JobManagers that take
// seconds to answer, each pass spends seconds of simulated time, and an object may wait minutes
// for its next pass where the operator would requeue it within seconds (explorer seed 41000003:
// no pass of alpha for 4m20s after its job failed in Submitting).
func passedSince(passes []time.Time, t time.Time) bool {
	return len(passes) > 0 && !passes[len(passes)-1].Before(t)
}

// mostPods is the most pods one cluster of the object asked for (its JobManager's and TaskManagers'
// replicas) in the visit of the phase that began at since. It is remembered, as the start's bound
// was set by the cluster it started: a pass that deleted that cluster as the spec changed, killed
// before it wrote the move out of the phase, leaves the phase in status with no Deployments.
func (x *explorer) mostPods(id *identity, since time.Time) int {
	if !id.podsSince.Equal(since) {
		id.podsSince, id.mostPods = since, 0
	}
	deps, err := x.w.kube.AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		x.t.Fatalf("listing Deployments: %v", err)
	}
	pods := map[string]int{}
	for i := range deps.Items {
		d := &deps.Items[i]
		if d.Labels[k8.AppLabel] != id.name {
			continue
		}
		h := d.Labels[k8.HashLabel]
		pods[h] += int(replicas(d))
		id.mostPods = max(id.mostPods, pods[h])
	}
	return id.mostPods
}

// restartedSince tells whether the operator restarted, or came back from being down, since t.
func (x *explorer) restartedSince(t time.Time) bool {
	for _, r := range x.restarts {
		if !r.Before(t) {
			return true
		}
	}
	return false
}

// phaseOf reads the object's phase, when it began, and what its status says of it (its reason and
// its conditions' messages).
func (x *explorer) phaseOf(id *identity) (string, *metav1.Time, string) {
	ctx := context.Background()
	says := func(m v1beta1.MachineStatus) string {
		out := m.Reason
		for _, c := range m.Conditions {
			out += "\n" + c.Message
		}
		return out
	}
	switch id.kind {
	case applicationKindName:
		if a, err := x.w.apps.FlinkV1beta1().FlinkApplications(ns).Get(ctx, id.name, metav1.GetOptions{}); err == nil {
			return string(a.Status.Phase), a.Status.PhaseStartedAt, says(a.Status.MachineStatus)
		}
	case sessionJobKindName:
		if j, err := x.w.apps.FlinkV1beta1().FlinkSessionJobs(ns).Get(ctx, id.name, metav1.GetOptions{}); err == nil {
			return string(j.Status.Phase), j.Status.PhaseStartedAt, says(j.Status.MachineStatus)
		}
	case sessionClusterKindName:
		if c, err := x.w.apps.FlinkV1beta1().FlinkSessionClusters(ns).Get(ctx, id.name, metav1.GetOptions{}); err == nil {
			return string(c.Status.Phase), c.Status.PhaseStartedAt, says(c.Status.MachineStatus)
		}
	}
	return "", nil, ""
}
