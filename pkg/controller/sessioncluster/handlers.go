package sessioncluster

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/fsm"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// A FlinkSessionCluster's handlers. A spec change starts the new Flink cluster beside the running
// one; once it is ready, status.deployHash names it and every job moves itself across per its own
// upgradeMode (the session job's Running handler). The old cluster is deleted when no job is left
// on it, so a job that cannot be stopped safely keeps it, and says why in its own status.

// handleDeploy records the spec's cluster as the one being started, then creates it.
func handleDeploy(p *Pass) fsm.Outcome {
	if err := specError(p); err != nil {
		return fsm.Failed(jobs.Permanent("CheckSpec", err))
	}
	if err := podPolicyError(p); err != nil {
		return fsm.Failed(err)
	}
	if err := p.EnsureFinalizer(); err != nil {
		return fsm.Failed(err)
	}
	st := p.Owned
	if _, recorded := clusters.RecordedSessionSpec(p.status(), p.Hash); st.UpdatingHash != p.Hash || !recorded {
		// The spec the cluster is rendered from is recorded with it, before it is created.
		st.UpdatingHash = p.Hash
		if err := recordClusterSpec(p, p.Hash); err != nil {
			return fsm.Failed(err)
		}
		return fsm.PersistThenContinue()
	}
	if err := createCluster(p, p.ClusterOwner, p.Hash); err != nil {
		return fsm.Failed(err)
	}
	what := "creating Flink cluster " + flink.VersionedServiceNameOf(p.Meta.Name, p.Hash)
	if st.DeployHash != "" {
		what += " beside " + flink.VersionedServiceNameOf(p.Meta.Name, st.DeployHash) + "; its jobs move over once it is ready"
	}
	return fsm.MoveTo(fsm.PhaseClusterStarting, "ClusterCreated", what)
}

// handleStarting waits until the new cluster's JobManager answers; then jobs are
// submitted to it.
func handleStarting(p *Pass) fsm.Outcome {
	st, m := p.Owned, p.Machine
	if p.Hash != st.UpdatingHash {
		return fsm.MoveTo(fsm.PhaseUpdating, "SpecChanged", fmt.Sprintf("spec changed again (cluster hash %s)", p.Hash))
	}
	if err := createCluster(p, p.ClusterOwner, p.Hash); err != nil {
		return fsm.Failed(err)
	}
	if c := p.Clusters[p.Hash]; !c.Ready() {
		if c != nil {
			p.WaitOn(c.Problem)
		}
		return fsm.Stay(0)
	}
	ov, err := p.Flink().Overview(p.Hash)
	if err != nil {
		return fsm.Stay(0)
	}
	previous := st.DeployHash
	st.DeployHash, st.UpdatingHash, m.FailedDeployHash = p.Hash, "", ""
	p.Observation().Cluster(p.Hash)
	msg := fmt.Sprintf("Flink cluster %s ready with %d task slots", flink.VersionedServiceNameOf(p.Meta.Name, p.Hash), ov.SlotsTotal)
	if previous != "" {
		msg += fmt.Sprintf("; jobs on %s move to it", flink.VersionedServiceNameOf(p.Meta.Name, previous))
	}
	return fsm.MoveTo(fsm.PhaseRunning, "ClusterReady", msg)
}

// handleRunning keeps the running cluster's objects in place, reports its slots, and
// deletes earlier clusters once no job is left on them.
func handleRunning(p *Pass) fsm.Outcome {
	st, m := p.Owned, p.Machine
	if p.Hash != st.DeployHash && p.Hash != m.FailedDeployHash {
		return fsm.MoveTo(fsm.PhaseUpdating, "SpecChanged", fmt.Sprintf("spec changed (cluster hash %s -> %s)", st.DeployHash, p.Hash))
	}
	return watchSessionCluster(p)
}

// handleDeployFailed rests after a cluster that did not start, keeping the running one
// and its jobs, until the spec changes. The failed cluster is no longer being started: it is removed
// with the other clusters no job runs on.
func handleDeployFailed(p *Pass) fsm.Outcome {
	st, m := p.Owned, p.Machine
	if st.UpdatingHash != "" && st.UpdatingHash == m.FailedDeployHash {
		st.UpdatingHash = ""
	}
	switch {
	case p.Hash == st.DeployHash:
		m.FailedDeployHash = ""
		return fsm.MoveTo(fsm.PhaseRunning, "SpecRestored", "spec is back to the running cluster's")
	case p.Hash != m.FailedDeployHash:
		return fsm.MoveTo(fsm.PhaseUpdating, "SpecChanged", fmt.Sprintf("spec changed (cluster hash %s)", p.Hash))
	}
	return watchSessionCluster(p)
}

// watchSessionCluster recreates objects of the running cluster that went missing (its jobs are lost
// with a JobManager and restart from their state), reports its slots and removes earlier clusters
// no job runs on any more.
func watchSessionCluster(p *Pass) fsm.Outcome {
	st, m := p.Owned, p.Machine
	if st.DeployHash == "" {
		return fsm.Stay(0)
	}
	if c := p.Clusters[st.DeployHash]; c == nil || c.JobManager == nil || c.TaskManager == nil || c.Service == nil {
		// As the cluster was rendered, not from a spec that changed since (one that failed to
		// deploy, say).
		if err := createCluster(p, ownerOfCluster(p, st.DeployHash), st.DeployHash); err != nil {
			return fsm.Failed(fmt.Errorf("objects of Flink cluster %s are missing, and are not created again from the spec: %w",
				flink.VersionedServiceNameOf(p.Meta.Name, st.DeployHash), err))
		}
		p.Event(true, "ClusterRecreated", fmt.Sprintf("objects of Flink cluster %s were missing and were created again",
			flink.VersionedServiceNameOf(p.Meta.Name, st.DeployHash)))
	}
	p.Observation().Cluster(st.DeployHash)
	settleLeftJobs(p)
	if err := bringBackJobManagers(p); err != nil {
		return fsm.Failed(err)
	}
	defer func() {
		if err := keepClusterSpecs(p); err != nil {
			p.Event(true, "ClusterSpecNotRecorded", err.Error())
		}
	}()
	for hash, c := range p.Clusters {
		if hash == st.DeployHash || hash == st.UpdatingHash || c.JobManager == nil && c.TaskManager == nil && c.Service == nil {
			continue
		}
		if on := jobsOnCluster(p, hash); len(on) > 0 {
			m.Reason = fmt.Sprintf("Flink cluster %s is kept while jobs run on it: %s", flink.VersionedServiceNameOf(p.Meta.Name, hash), strings.Join(on, ", "))
			continue
		}
		if jobstate.LeftJobOn(p.status(), hash) {
			// Its objects may be missing only because they are being brought back for the job
			// (bringBackJobManagers), which this pass's view of the cluster does not show yet.
			m.Reason = fmt.Sprintf("Flink cluster %s is kept while jobs left running by deleteMode None run on it (status.leftJobs)",
				flink.VersionedServiceNameOf(p.Meta.Name, hash))
			continue
		}
		if left := jobsLeftOnCluster(p, hash, c); left != "" {
			// A job no FlinkSessionJob records (one deleted with deleteMode None left it) still runs
			// there: deleting the cluster would end it without its state.
			m.Reason = fmt.Sprintf("Flink cluster %s is kept: %s", flink.VersionedServiceNameOf(p.Meta.Name, hash), left)
			continue
		}
		if err := p.DeleteCluster(hash); err != nil {
			return fsm.Failed(err)
		}
		p.Event(false, "ClusterDeleted", fmt.Sprintf("deleted Flink cluster %s: no job runs on it any more", flink.VersionedServiceNameOf(p.Meta.Name, hash)))
	}
	return fsm.Stay(0)
}

// jobsLeftOnCluster says which jobs Flink runs on an earlier cluster that no session job records, or
// why that is not known; "" once Flink says none runs, the cluster has no JobManager, or it is a
// failed deploy's.
func jobsLeftOnCluster(p *Pass, hash string, c *clusters.Objects) string {
	if c.JobManager == nil && c.JobManagerPods == 0 || hash == p.Machine.FailedDeployHash {
		// No JobManager left to run a job, or a deploy that failed, whose cluster never took the
		// session's jobs. A JobManager that does not answer now is no proof that none runs.
		return ""
	}
	list, err := p.Flink().Jobs(hash)
	if err != nil {
		return fmt.Sprintf("whether jobs still run on it is not known (%v)", err)
	}
	var running []string
	for _, j := range list {
		if !client.IsGloballyTerminal(j.Status) {
			running = append(running, fmt.Sprintf("%s (%s)", j.ID, j.Status))
		}
	}
	if len(running) == 0 {
		return ""
	}
	sort.Strings(running)
	return fmt.Sprintf("jobs no FlinkSessionJob records run on it: %s; stop them in Flink (with a savepoint, if their state is needed) to let it go",
		strings.Join(running, ", "))
}

// jobsOnCluster names the session jobs whose records place a job on the Flink cluster with this hash,
// with the phase each is in.
func jobsOnCluster(p *Pass, hash string) []string {
	var out []string
	for _, j := range append(slices.Clone(p.Jobs), p.OtherShardJobs...) {
		for _, r := range []*v1beta1.DeploymentRecord{j.Status.Deployments.Stable, j.Status.Deployments.Candidate} {
			if r != nil && r.ClusterHash == hash && r.JobID != "" {
				out = append(out, fmt.Sprintf("%s (%s)", j.Name, j.Status.Phase))
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// handleDeleting holds the deletion while FlinkSessionJobs name the cluster: their jobs
// need it to be stopped with their state. Once none is left the finalizer goes and the cluster's
// objects go by garbage collection. Deleting the jobs, or the namespace, always lets it finish.
func handleDeleting(p *Pass) fsm.Outcome {
	m := p.Machine
	if !lifecycle.HasFinalizer(p.Meta) {
		return fsm.Stay(fsm.UntilChanged)
	}
	var names []string
	for _, j := range p.Jobs {
		names = append(names, j.Name)
	}
	sort.Strings(names)
	if len(names) > 0 || len(p.OtherShardJobs) > 0 {
		msg := fmt.Sprintf("deletion waits for the FlinkSessionJobs on this cluster: %s; delete them first (each stops its job per its deleteMode)",
			strings.Join(names, ", "))
		if others := p.OtherShardJobs; len(others) > 0 {
			msg = fmt.Sprintf("deletion waits for FlinkSessionJobs of another shard that name this cluster: %s; their operator holds them "+
				"until they are relabelled into this cluster's shard, where they can be deleted", jobNames(others))
			if len(names) > 0 {
				msg += fmt.Sprintf("; and for those of this shard: %s, to be deleted (each stops its job per its deleteMode)", strings.Join(names, ", "))
			}
		}
		if m.Reason == msg {
			return fsm.Stay(0)
		}
		return fsm.Outcome{Reason: "DeletionHeld", Message: msg, Warning: true}
	}
	if out, waiting := kindpass.RemoveHAConfigMapsBeforeFinalizer(p.Pass); waiting {
		return out
	}
	if err := p.RemoveFinalizer(); err != nil {
		return fsm.Failed(err)
	}
	return fsm.Outcome{Reason: "Deleted", Message: "no FlinkSessionJob is left; the cluster's objects go by garbage collection", After: fsm.UntilChanged}
}

// sessionJobRefs are the jobs placed on a cluster, for its status.
func sessionJobRefs(jobs []*v1beta1.FlinkSessionJob) []v1beta1.SessionJobReference {
	var out []v1beta1.SessionJobReference
	for _, j := range jobs {
		out = append(out, jobstate.SessionJobReference(j))
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}
