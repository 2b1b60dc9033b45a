package flinkapplication

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// A FlinkSessionCluster's handlers. A spec change starts the new Flink cluster beside the running
// one; once it is ready, status.deployHash names it and every job moves itself across per its own
// upgradeMode (the session job's Running handler). The old cluster is deleted when no job is left
// on it, so a job that cannot be stopped safely keeps it, and says why in its own status.

// handleSessionClusterDeploy records the spec's cluster as the one being started, then creates it.
func handleSessionClusterDeploy(rc *Context) Outcome {
	if err := sessionClusterSpecError(rc); err != nil {
		return failed(jobs.Permanent("CheckSpec", err))
	}
	if err := podPolicyError(rc); err != nil {
		return failed(err)
	}
	if err := rc.EnsureFinalizer(); err != nil {
		return failed(err)
	}
	st := rc.Owned
	if _, recorded := recordedClusterSpec(sessionClusterStatus(rc), rc.Hash); st.UpdatingHash != rc.Hash || !recorded {
		// The spec the cluster is rendered from is recorded with it, before it is created.
		st.UpdatingHash = rc.Hash
		if err := recordClusterSpec(rc, rc.Hash); err != nil {
			return failed(err)
		}
		return persistThenContinue()
	}
	if err := createCluster(rc, rc.ClusterOwner, rc.Hash); err != nil {
		return failed(err)
	}
	what := "creating Flink cluster " + flink.VersionedServiceNameOf(rc.Meta.Name, rc.Hash)
	if st.DeployHash != "" {
		what += " beside " + flink.VersionedServiceNameOf(rc.Meta.Name, st.DeployHash) + "; its jobs move over once it is ready"
	}
	return moveTo(PhaseClusterStarting, "ClusterCreated", what)
}

// handleSessionClusterStarting waits until the new cluster's JobManager answers; then jobs are
// submitted to it.
func handleSessionClusterStarting(rc *Context) Outcome {
	st, m := rc.Owned, rc.Machine
	if rc.Hash != st.UpdatingHash {
		return moveTo(PhaseUpdating, "SpecChanged", fmt.Sprintf("spec changed again (cluster hash %s)", rc.Hash))
	}
	if err := createCluster(rc, rc.ClusterOwner, rc.Hash); err != nil {
		return failed(err)
	}
	if c := rc.Clusters[rc.Hash]; !c.Ready() {
		if c != nil {
			rc.WaitOn(c.Problem)
		}
		return stay(0)
	}
	ov, err := rc.Flink().Overview(rc.Hash)
	if err != nil {
		return stay(0)
	}
	previous := st.DeployHash
	st.DeployHash, st.UpdatingHash, m.FailedDeployHash = rc.Hash, "", ""
	rc.Observation().Cluster(rc.Hash)
	msg := fmt.Sprintf("Flink cluster %s ready with %d task slots", flink.VersionedServiceNameOf(rc.Meta.Name, rc.Hash), ov.SlotsTotal)
	if previous != "" {
		msg += fmt.Sprintf("; jobs on %s move to it", flink.VersionedServiceNameOf(rc.Meta.Name, previous))
	}
	return moveTo(PhaseRunning, "ClusterReady", msg)
}

// handleSessionClusterRunning keeps the running cluster's objects in place, reports its slots, and
// deletes earlier clusters once no job is left on them.
func handleSessionClusterRunning(rc *Context) Outcome {
	st, m := rc.Owned, rc.Machine
	if rc.Hash != st.DeployHash && rc.Hash != m.FailedDeployHash {
		return moveTo(PhaseUpdating, "SpecChanged", fmt.Sprintf("spec changed (cluster hash %s -> %s)", st.DeployHash, rc.Hash))
	}
	return watchSessionCluster(rc)
}

// handleSessionClusterDeployFailed rests after a cluster that did not start, keeping the running one
// and its jobs, until the spec changes. The failed cluster is no longer being started: it is removed
// with the other clusters no job runs on.
func handleSessionClusterDeployFailed(rc *Context) Outcome {
	st, m := rc.Owned, rc.Machine
	if st.UpdatingHash != "" && st.UpdatingHash == m.FailedDeployHash {
		st.UpdatingHash = ""
	}
	switch {
	case rc.Hash == st.DeployHash:
		m.FailedDeployHash = ""
		return moveTo(PhaseRunning, "SpecRestored", "spec is back to the running cluster's")
	case rc.Hash != m.FailedDeployHash:
		return moveTo(PhaseUpdating, "SpecChanged", fmt.Sprintf("spec changed (cluster hash %s)", rc.Hash))
	}
	return watchSessionCluster(rc)
}

// watchSessionCluster recreates objects of the running cluster that went missing (its jobs are lost
// with a JobManager and restart from their state), reports its slots and removes earlier clusters
// no job runs on any more.
func watchSessionCluster(rc *Context) Outcome {
	st, m := rc.Owned, rc.Machine
	if st.DeployHash == "" {
		return stay(0)
	}
	if c := rc.Clusters[st.DeployHash]; c == nil || c.JobManager == nil || c.TaskManager == nil || c.Service == nil {
		// As the cluster was rendered, not from a spec that changed since (one that failed to
		// deploy, say).
		if err := createCluster(rc, ownerOfCluster(rc, st.DeployHash), st.DeployHash); err != nil {
			return failed(fmt.Errorf("objects of Flink cluster %s are missing, and are not created again from the spec: %w",
				flink.VersionedServiceNameOf(rc.Meta.Name, st.DeployHash), err))
		}
		rc.Event(true, "ClusterRecreated", fmt.Sprintf("objects of Flink cluster %s were missing and were created again",
			flink.VersionedServiceNameOf(rc.Meta.Name, st.DeployHash)))
	}
	rc.Observation().Cluster(st.DeployHash)
	settleLeftJobs(rc)
	if err := bringBackJobManagers(rc); err != nil {
		return failed(err)
	}
	defer func() {
		if err := keepClusterSpecs(rc); err != nil {
			rc.Event(true, "ClusterSpecNotRecorded", err.Error())
		}
	}()
	for hash, c := range rc.Clusters {
		if hash == st.DeployHash || hash == st.UpdatingHash || c.JobManager == nil && c.TaskManager == nil && c.Service == nil {
			continue
		}
		if on := jobsOnCluster(rc, hash); len(on) > 0 {
			m.Reason = fmt.Sprintf("Flink cluster %s is kept while jobs run on it: %s", flink.VersionedServiceNameOf(rc.Meta.Name, hash), strings.Join(on, ", "))
			continue
		}
		if leftJobOn(sessionClusterStatus(rc), hash) {
			// Its objects may be missing only because they are being brought back for the job
			// (bringBackJobManagers), which this pass's view of the cluster does not show yet.
			m.Reason = fmt.Sprintf("Flink cluster %s is kept while jobs left running by deleteMode None run on it (status.leftJobs)",
				flink.VersionedServiceNameOf(rc.Meta.Name, hash))
			continue
		}
		if left := jobsLeftOnCluster(rc, hash, c); left != "" {
			// A job no FlinkSessionJob records (one deleted with deleteMode None left it) still runs
			// there: deleting the cluster would end it without its state.
			m.Reason = fmt.Sprintf("Flink cluster %s is kept: %s", flink.VersionedServiceNameOf(rc.Meta.Name, hash), left)
			continue
		}
		if err := rc.DeleteCluster(hash); err != nil {
			return failed(err)
		}
		rc.Event(false, "ClusterDeleted", fmt.Sprintf("deleted Flink cluster %s: no job runs on it any more", flink.VersionedServiceNameOf(rc.Meta.Name, hash)))
	}
	return stay(0)
}

// jobsLeftOnCluster says which jobs Flink runs on an earlier cluster that no session job records, or
// why that is not known; "" once Flink says none runs, the cluster has no JobManager, or it is a
// failed deploy's.
func jobsLeftOnCluster(rc *Context, hash string, c *ClusterObjects) string {
	if c.JobManager == nil && c.JobManagerPods == 0 || hash == rc.Machine.FailedDeployHash {
		// No JobManager left to run a job, or a deploy that failed, whose cluster never took the
		// session's jobs. A JobManager that does not answer now is no proof that none runs.
		return ""
	}
	list, err := rc.Flink().Jobs(hash)
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
func jobsOnCluster(rc *Context, hash string) []string {
	var out []string
	for _, j := range append(slices.Clone(rc.session.Jobs), rc.session.OtherShardJobs...) {
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

// handleSessionClusterDeleting holds the deletion while FlinkSessionJobs name the cluster: their jobs
// need it to be stopped with their state. Once none is left the finalizer goes and the cluster's
// objects go by garbage collection. Deleting the jobs, or the namespace, always lets it finish.
func handleSessionClusterDeleting(rc *Context) Outcome {
	m := rc.Machine
	if !hasFinalizer(rc.Meta) {
		return stay(untilChanged)
	}
	var names []string
	for _, j := range rc.session.Jobs {
		names = append(names, j.Name)
	}
	sort.Strings(names)
	if len(names) > 0 || len(rc.session.OtherShardJobs) > 0 {
		msg := fmt.Sprintf("deletion waits for the FlinkSessionJobs on this cluster: %s; delete them first (each stops its job per its deleteMode)",
			strings.Join(names, ", "))
		if others := rc.session.OtherShardJobs; len(others) > 0 {
			msg = fmt.Sprintf("deletion waits for FlinkSessionJobs of another shard that name this cluster: %s; their operator holds them "+
				"until they are relabelled into this cluster's shard, where they can be deleted", jobNames(others))
			if len(names) > 0 {
				msg += fmt.Sprintf("; and for those of this shard: %s, to be deleted (each stops its job per its deleteMode)", strings.Join(names, ", "))
			}
		}
		if m.Reason == msg {
			return stay(0)
		}
		return Outcome{Reason: "DeletionHeld", Message: msg, Warning: true}
	}
	if out, waiting := kindpass.RemoveHAConfigMapsBeforeFinalizer(rc.Pass); waiting {
		return out
	}
	if err := rc.RemoveFinalizer(); err != nil {
		return failed(err)
	}
	return Outcome{Reason: "Deleted", Message: "no FlinkSessionJob is left; the cluster's objects go by garbage collection", After: untilChanged}
}

// sessionJobRefs are the jobs placed on a cluster, for its status.
func sessionJobRefs(jobs []*v1beta1.FlinkSessionJob) []v1beta1.SessionJobReference {
	var out []v1beta1.SessionJobReference
	for _, j := range jobs {
		out = append(out, sessionJobRefOf(j))
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}
