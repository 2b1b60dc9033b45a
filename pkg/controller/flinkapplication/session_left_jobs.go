package flinkapplication

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

// A FlinkSessionJob deleted with deleteMode None leaves its job running on the session cluster, and
// until that job completes a checkpoint of its own, a restart of it restores the state it started
// from: a savepoint another object may own and dispose of. The session cluster names that state for
// the guardian (kindpass/durable_state.go) in status.leftJobs, which it alone writes:
//   - it admits the job of a session job being deleted with deleteMode None, while there is room;
//     the session job's finalizer stays until its cluster's stored status lists the job, so the
//     state is named at every moment, and a full list holds deletes instead of dropping an entry;
//   - an entry goes on positive evidence only: Flink says the job ended, or that it completed a
//     checkpoint after its last restore; or its JobManager is gone with no Flink HA to bring it back.

const (
	// maxLeftJobs is how many left jobs a session cluster lists (the CRD's bound).
	maxLeftJobs = 100
	// leftJobChecksPerPass bounds the job and checkpoint reads one pass makes for left jobs beyond
	// one job list per Flink cluster: a few jobs each pass, in turn.
	leftJobChecksPerPass = 4
)

// sessionJobRefOf is one session job's entry of its cluster's status.jobs: its live job, which is the
// candidate's while it has one (the stable job was stopped for it), as its delete takes it.
func sessionJobRefOf(j *v1beta1.FlinkSessionJob) v1beta1.SessionJobReference {
	ref := v1beta1.SessionJobReference{Name: j.Name, JobID: j.Status.JobStatus.JobID, State: j.Status.JobStatus.State,
		UID: j.UID, DeleteMode: deleteModeOr(j.Spec.DeleteMode)}
	for _, r := range []*v1beta1.DeploymentRecord{j.Status.Deployments.Candidate, j.Status.Deployments.Stable} {
		if r != nil && r.JobID != "" {
			ref.JobID, ref.ClusterHash, ref.RestorePath = r.JobID, r.ClusterHash, startStateOf(&j.Status.JobOwnerStatus, r)
			break
		}
	}
	return ref
}

// startStateOf is the state the record's job started from: the record's own once it is stable, the
// one the candidate was sent from before that (deployments.nextRestorePath).
func startStateOf(st *v1beta1.JobOwnerStatus, r *v1beta1.DeploymentRecord) string {
	if r.RestorePath == "" && r == st.Deployments.Candidate {
		return st.Deployments.NextRestorePath
	}
	return r.RestorePath
}

// admitLeftJobs lists in leftJobs the jobs that session jobs being deleted with deleteMode None leave
// running, while there is room, and those of session jobs the stored status.jobs names with such a
// delete that are gone without it (their finalizer removed by hand).
func admitLeftJobs(rc *Context, stored []v1beta1.SessionJobReference) {
	st := sessionClusterStatus(rc)
	listed := map[string]bool{}
	for _, l := range st.LeftJobs {
		listed[l.JobID] = true
	}
	admit := func(r v1beta1.SessionJobReference) bool {
		if listed[r.JobID] {
			return true
		}
		if len(st.LeftJobs) >= maxLeftJobs {
			return false
		}
		st.LeftJobs = append(st.LeftJobs, v1beta1.LeftJob{JobID: r.JobID, ClusterHash: r.ClusterHash, SessionJob: r.Name,
			RestorePath: r.RestorePath, Since: metav1.NewTime(rc.Now)})
		listed[r.JobID] = true
		return true
	}
	leaves := func(r v1beta1.SessionJobReference) bool {
		return r.JobID != "" && r.RestorePath != "" && r.DeleteMode == v1beta1.DeleteModeNone
	}
	there := map[string]bool{}
	for _, j := range rc.session.Jobs {
		there[j.Name+"/"+string(j.UID)] = true
		// A full list holds the delete (leftJobWaits says so).
		if r := sessionJobRefOf(j); j.DeletionTimestamp != nil && leaves(r) {
			admit(r)
		}
	}
	for _, r := range stored {
		if there[r.Name+"/"+string(r.UID)] || !leaves(r) || admit(r) {
			continue
		}
		rc.Event(true, "LeftJobNotKept", fmt.Sprintf("job %s, left running by FlinkSessionJob %s, starts again from %s if it fails "+
			"before its first checkpoint, and status.leftJobs is full (%d): that state is not kept for it", r.JobID, r.Name, r.RestorePath, maxLeftJobs))
	}
}

// settleLeftJobs lets go of the left jobs Flink says no longer need the state they started from: one
// job list per Flink cluster, which says which jobs still run, and a few reads of single jobs per
// pass, in turn, which say whether the others stopped or whether a running one checkpointed.
func settleLeftJobs(rc *Context) {
	st := sessionClusterStatus(rc)
	if len(st.LeftJobs) == 0 {
		return
	}
	// An entry whose session job is still there stays until it is gone: its delete waits for the
	// entry, which must not go before the delete saw it.
	owned := map[string]bool{}
	for _, j := range rc.session.Jobs {
		owned[sessionJobRefOf(j).JobID] = true
	}
	var kept []v1beta1.LeftJob
	checks := 0
	first := int(rc.Now.Unix()/10) % len(st.LeftJobs) // a different few every ten seconds
	for i := range st.LeftJobs {
		l := st.LeftJobs[(first+i)%len(st.LeftJobs)]
		if owned[l.JobID] {
			kept = append(kept, l)
			continue
		}
		over, asked := leftJobOver(rc, l, checks < leftJobChecksPerPass)
		if asked {
			checks++
		}
		if over != "" {
			rc.Event(false, "LeftJobSettled", fmt.Sprintf("job %s, left running by FlinkSessionJob %s, no longer needs %s: %s",
				l.JobID, l.SessionJob, l.RestorePath, over))
			continue
		}
		kept = append(kept, l)
	}
	sort.SliceStable(kept, func(a, b int) bool { return kept[a].Since.Before(&kept[b].Since) })
	st.LeftJobs = kept
}

// leftJobOver says why a left job no longer needs the state it started from, "" while it may. asked
// tells whether a single job was read for it, which mayAsk allows.
func leftJobOver(rc *Context, l v1beta1.LeftJob, mayAsk bool) (over string, asked bool) {
	if rc.Clusters[l.ClusterHash].JobManagerGone() {
		// Flink HA brings the job back with a JobManager the cluster creates again
		// (bringBackJobManagers): only without it is the job gone with its JobManager.
		if haKeepsJobs(rc, l.ClusterHash) || len(rc.HAConfigMaps[l.ClusterHash]) > 0 {
			return "", false
		}
		return "its JobManager is gone, with no Flink HA to bring it back", false
	}
	list, err := rc.Flink().Jobs(l.ClusterHash)
	if err != nil {
		return "", false
	}
	running := false
	for _, j := range list {
		if j.ID == l.JobID && !client.IsGloballyTerminal(j.Status) {
			running = true
		}
	}
	if !mayAsk {
		return "", false
	}
	if !running {
		// Ended or not listed: the list alone is no proof, the job's own read says whether it
		// stopped, as it does before any job is taken for stopped.
		if v := rc.Flink().View(l.ClusterHash, l.JobID); v.Liveness == jobs.Stopped {
			return "it stopped (" + v.Evidence + ")", true
		}
		return "", true
	}
	stats, err := rc.Flink().Checkpoints(rc.Flink().Ref(l.ClusterHash, l.JobID))
	if err == nil && stats != nil && ownCheckpointSinceRestore(stats) {
		return fmt.Sprintf("it completed checkpoint %d", stats.Latest.Completed.ID), true
	}
	return "", true
}

// ownCheckpointSinceRestore tells whether Flink says the job completed a checkpoint after the restore
// it reports last: a restart then restores that one.
func ownCheckpointSinceRestore(s *client.CheckpointStats) bool {
	c, r := s.Latest.Completed, s.Latest.Restored
	return c != nil && (r == nil || c.ID > r.ID)
}

// leftJobOn tells whether a left job runs on the Flink cluster with this hash.
func leftJobOn(st *v1beta1.FlinkSessionClusterStatus, hash string) bool {
	for _, l := range st.LeftJobs {
		if l.ClusterHash == hash {
			return true
		}
	}
	return false
}

// leftJobWaits holds the delete of a session job whose deleteMode None leaves its job running from a
// state, until its cluster's stored status lists the job in leftJobs. Nothing is waited for when the
// session cluster is gone; nor when it is being deleted and its list is full, since its delete waits
// for this one and the job ends with it.
func leftJobWaits(rc *Context, rec *v1beta1.DeploymentRecord) (Outcome, bool) {
	if rc.session == nil || rec == nil || rec.JobID == "" || startStateOf(rc.Job, rec) == "" {
		return Outcome{}, false
	}
	c := rc.session.Cluster
	if c == nil {
		return Outcome{}, false
	}
	for _, l := range c.Status.LeftJobs {
		if l.JobID == rec.JobID {
			return Outcome{}, false
		}
	}
	from, full := startStateOf(rc.Job, rec), len(c.Status.LeftJobs) >= maxLeftJobs
	if c.DeletionTimestamp != nil && full {
		return Outcome{}, false
	}
	msg := fmt.Sprintf("deleteMode None leaves job %s running from %s: the delete waits until FlinkSessionCluster %s lists it "+
		"in status.leftJobs, so that the state stays while the job may restart from it", rec.JobID, from, c.Name)
	if full {
		msg = fmt.Sprintf("deleteMode None leaves job %s running from %s, and FlinkSessionCluster %s already lists %d jobs left "+
			"running in status.leftJobs, each until it completes a checkpoint or ends: the delete waits for room. Cancel left jobs "+
			"in Flink to make room, or delete with deleteMode Savepoint", rec.JobID, from, c.Name, maxLeftJobs)
	}
	if rc.Machine.Reason == msg {
		return stay(0), true
	}
	return Outcome{Reason: "DeletionHeld", Message: msg, Warning: full}, true
}
