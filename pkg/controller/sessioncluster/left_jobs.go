package sessioncluster

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
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

// LeftJobChecksPerPass bounds the job and checkpoint reads one pass makes for left jobs beyond one
// job list per Flink cluster: a few jobs each pass, in turn. How many it lists is
// jobstate.MaxLeftJobs.
const LeftJobChecksPerPass = 4

// admitLeftJobs lists in leftJobs the jobs that session jobs being deleted with deleteMode None leave
// running, while there is room, and those of session jobs the stored status.jobs names with such a
// delete that are gone without it (their finalizer removed by hand).
func admitLeftJobs(p *Pass, stored []v1beta1.SessionJobReference) {
	st := p.status()
	listed := map[string]bool{}
	for _, l := range st.LeftJobs {
		listed[l.JobID] = true
	}
	admit := func(r v1beta1.SessionJobReference) bool {
		if listed[r.JobID] {
			return true
		}
		if len(st.LeftJobs) >= jobstate.MaxLeftJobs {
			return false
		}
		st.LeftJobs = append(st.LeftJobs, v1beta1.LeftJob{JobID: r.JobID, ClusterHash: r.ClusterHash, SessionJob: r.Name,
			RestorePath: r.RestorePath, Since: metav1.NewTime(p.Now)})
		listed[r.JobID] = true
		return true
	}
	leaves := func(r v1beta1.SessionJobReference) bool {
		return r.JobID != "" && r.RestorePath != "" && r.DeleteMode == v1beta1.DeleteModeNone
	}
	there := map[string]bool{}
	for _, j := range p.Jobs {
		there[j.Name+"/"+string(j.UID)] = true
		// A full list holds the delete (leftJobWaits says so).
		if r := jobstate.SessionJobReference(j); j.DeletionTimestamp != nil && leaves(r) {
			admit(r)
		}
	}
	for _, r := range stored {
		if there[r.Name+"/"+string(r.UID)] || !leaves(r) || admit(r) {
			continue
		}
		p.Event(true, "LeftJobNotKept", fmt.Sprintf("job %s, left running by FlinkSessionJob %s, starts again from %s if it fails "+
			"before its first checkpoint, and status.leftJobs is full (%d): that state is not kept for it", r.JobID, r.Name, r.RestorePath, jobstate.MaxLeftJobs))
	}
}

// settleLeftJobs lets go of the left jobs Flink says no longer need the state they started from: one
// job list per Flink cluster, which says which jobs still run, and a few reads of single jobs per
// pass, in turn, which say whether the others stopped or whether a running one checkpointed.
func settleLeftJobs(p *Pass) {
	st := p.status()
	if len(st.LeftJobs) == 0 {
		return
	}
	// An entry whose session job is still there stays until it is gone: its delete waits for the
	// entry, which must not go before the delete saw it.
	owned := map[string]bool{}
	for _, j := range p.Jobs {
		owned[jobstate.SessionJobReference(j).JobID] = true
	}
	var kept []v1beta1.LeftJob
	checks := 0
	first := int(p.Now.Unix()/10) % len(st.LeftJobs) // a different few every ten seconds
	for i := range st.LeftJobs {
		l := st.LeftJobs[(first+i)%len(st.LeftJobs)]
		if owned[l.JobID] {
			kept = append(kept, l)
			continue
		}
		over, asked := leftJobOver(p, l, checks < LeftJobChecksPerPass)
		if asked {
			checks++
		}
		if over != "" {
			p.Event(false, "LeftJobSettled", fmt.Sprintf("job %s, left running by FlinkSessionJob %s, no longer needs %s: %s",
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
func leftJobOver(p *Pass, l v1beta1.LeftJob, mayAsk bool) (over string, asked bool) {
	if p.Clusters[l.ClusterHash].JobManagerGone() {
		// Flink HA brings the job back with a JobManager the cluster creates again
		// (bringBackJobManagers): only without it is the job gone with its JobManager.
		if clusters.SessionKeepsJobs(p.cached, l.ClusterHash, nil) || len(p.HAConfigMaps[l.ClusterHash]) > 0 {
			return "", false
		}
		return "its JobManager is gone, with no Flink HA to bring it back", false
	}
	list, err := p.Flink().Jobs(l.ClusterHash)
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
		if v := p.Flink().View(l.ClusterHash, l.JobID); v.Liveness == jobs.Stopped {
			return "it stopped (" + v.Evidence + ")", true
		}
		return "", true
	}
	stats, err := p.Flink().Checkpoints(p.Flink().Ref(l.ClusterHash, l.JobID))
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
