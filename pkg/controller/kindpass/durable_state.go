package kindpass

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// What the guardian of durable state (package guardian) is told of the owner itself, from its pass:
// what its restore may need, read with its checkpoint book and its status as stored. What the
// other objects of the namespace need is read by package snapshots (snapshots.Namespace); the HA
// ConfigMaps' guardian is asked here too.

// StateGuardian is the guardian of the owner's namespace as this pass sees it. disposing says that
// storage goes on its word: other shards are then read now, not from a read seconds old.
func StateGuardian(p *Pass, disposing bool) (*guardian.Namespace, error) {
	return p.Env.namespaceState().Guardian(p, p.SnapshotOwner(), OwnReferences(p), p.Now, retention(p).MaxAge, disposing)
}

// OwnReferences is what the owner's own restore may need, read with its checkpoint book: the
// newest state of each job it records (protectedPaths), and what its spec names.
func OwnReferences(p *Pass) guardian.References {
	out := guardian.References{Holder: snapshots.HolderOf(p.KindName, p.Meta)}
	paths := protectedPaths(p)
	for _, path := range slices.Sorted(maps.Keys(paths)) {
		why := "its restore may need it"
		if !paths[path] {
			why = snapshots.StoredUntilWrite
		}
		out.Paths = append(out.Paths, guardian.Use{Name: path, Why: why})
	}
	if s := p.Settings; s != nil {
		// Pending by the status as stored counts as much as by the pass's own, until the write.
		if path := snapshots.PendingSpecPath(s.InitialSavepoint, s.RedeployNonce, p.Job); path != "" {
			out.Paths = append(out.Paths, guardian.Use{Name: path, Why: "its spec names it"})
		} else if p.Stored != nil && p.StoredJob != nil {
			if path := snapshots.PendingSpecPath(s.InitialSavepoint, s.RedeployNonce, p.StoredJob); path != "" {
				out.Paths = append(out.Paths, guardian.Use{Name: path, Why: snapshots.StoredUntilWrite})
			}
		}
		if s.RestoreSnapshot != "" {
			out.Snapshots = append(out.Snapshots, guardian.Use{Name: s.RestoreSnapshot, Why: s.Field("restoreSnapshot")})
		}
	}
	// A savepoint or checkpoint asked for, by this pass's status or the stored one, whose result is
	// not known yet may be the job's newest state under a path nobody has read. One the stored
	// status has pending whose answer this pass read is known: its result is in the pass's records
	// (a crash before the write leaves it pending for the next pass). A path either status gives to
	// a state is no pending one's result: retention trims the pass's ledger before it disposes.
	pending := []string{}
	if p.Job != nil {
		pending = snapshots.PendingJobs(p.Job)
		out.Recorded = snapshots.RecordedPaths(p.Job)
	}
	if p.StoredJob != nil {
		for _, j := range snapshots.PendingJobsNotAnswered(p.StoredJob, p.Job) {
			if !slices.Contains(pending, j) {
				pending = append(pending, j)
			}
		}
		out.Recorded = append(out.Recorded, snapshots.RecordedPaths(p.StoredJob)...)
	}
	out.Pending = snapshots.PendingUses(pending)
	return out
}

// haGuardian is the guardian asked before Flink's HA ConfigMaps of one of the owner's cluster ids
// are deleted. It knows the clusters the owner runs or may run again from them (unless the owner
// is being deleted and lets them all go), and those of the objects of the other kinds that share
// its name: a FlinkApplication and a FlinkSessionCluster of one name render cluster ids of one form.
func haGuardian(p *Pass, ownInUse bool) *guardian.Namespace {
	own := guardian.References{Holder: snapshots.HolderOf(p.KindName, p.Meta)}
	if ownInUse {
		for hash := range p.HAConfigMaps {
			if haClusterInUse(p, hash) {
				own.HAClusters = append(own.HAClusters, guardian.Use{Name: flink.HAClusterIDOf(p.Meta.Name, hash), Why: "a cluster of it runs, or may run again, from them"})
			}
		}
	}
	refs := []guardian.References{own}
	namesake := func(kind string, meta metav1.ObjectMeta, hashes ...string) {
		r := guardian.References{Holder: snapshots.HolderOf(kind, &meta)}
		for _, h := range hashes {
			if h != "" {
				r.HAClusters = append(r.HAClusters, guardian.Use{Name: flink.HAClusterIDOf(meta.Name, h), Why: "its cluster"})
			}
		}
		refs = append(refs, r)
	}
	if p.KindName != v1beta1.FlinkApplicationKind {
		if a, err := p.Env.Observer.Application(p.Meta.Namespace, p.Meta.Name); err == nil && a != nil {
			hashes := []string{a.Status.DeployHash, a.Status.UpdatingHash}
			for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(&a.Status.JobOwnerStatus), jobstate.Candidate(&a.Status.JobOwnerStatus)} {
				if r != nil {
					hashes = append(hashes, r.ClusterHash)
				}
			}
			namesake(v1beta1.FlinkApplicationKind, a.ObjectMeta, hashes...)
		}
	}
	if p.KindName != v1beta1.FlinkSessionClusterKind && p.Env.Sessions != nil {
		if c, err := p.Env.Sessions.SessionCluster(p.Meta.Namespace, p.Meta.Name); err == nil && c != nil {
			namesake(v1beta1.FlinkSessionClusterKind, c.ObjectMeta, c.Status.DeployHash, c.Status.UpdatingHash)
		}
	}
	return guardian.NewNamespace(refs, nil)
}

// OwnClusterHashes are the clusters this very object's status names (its deploy and updating
// hashes, its records, its ledger's entries, the versions it ran), and the spec's cluster when its
// JobManager Deployment is this object's (OwnHashes adds what only the kind's status names). A cluster id of its name with
// another hash was left by a namesake (one deleted with deleteMode None, or one of another kind):
// its HA ConfigMaps are not this object's to delete.
func OwnClusterHashes(p *Pass) map[string]bool {
	out := map[string]bool{}
	if c := p.Clusters[p.Hash]; c != nil && c.JobManager != nil && metav1.IsControlledBy(c.JobManager, p.Meta) {
		// The spec's cluster, made by this very object (its status may not name it yet).
		out[p.Hash] = true
	}
	if o := p.Owned; o != nil {
		out[o.DeployHash], out[o.UpdatingHash] = true, true
	}
	if j := p.Job; j != nil {
		for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(j), jobstate.Candidate(j)} {
			if r != nil {
				out[r.ClusterHash] = true
			}
		}
		for _, e := range j.Ledger {
			out[e.ClusterHash] = true
		}
	}
	if p.OwnHashes != nil {
		p.OwnHashes(out)
	}
	delete(out, "")
	return out
}

// mayRemoveHAConfigMaps tells whether the HA ConfigMaps of the owner's cluster with this hash may be
// deleted: the cluster is the object's own, and the guardian knows nothing that needs them.
func mayRemoveHAConfigMaps(p *Pass, g *guardian.Namespace, own map[string]bool, hash string) bool {
	if !own[hash] {
		return false
	}
	v := g.MayDelete(guardian.State{HACluster: flink.HAClusterIDOf(p.Meta.Name, hash)})
	return v.MayGo()
}

// protectedPaths are the states the owner's restore may need: what the running and the next job
// start from, the final savepoint, the newest completed state of each job it records and, when
// that job's checkpoints may go with it as it ends (NO_EXTERNALIZED_CHECKPOINTS, or
// DELETE_ON_CANCELLATION: explorer seed 10000122), its newest savepoint, and what a rollback
// restores. The status as stored counts as much as the pass's own: a pass that moves its
// records on (a job that now runs becomes the stable one) writes them at its end, and until then the
// stored status is what a new process reads after a crash. Nothing it names goes before the write
// that stops naming it. The value says whether the pass's own status names the path too (false:
// only the stored one, until this pass's write).
func protectedPaths(p *Pass) map[string]bool {
	out := map[string]bool{}
	if p.Stored != nil && p.StoredJob != nil {
		for path := range PathsNamedBy(p, p.StoredJob) {
			out[path] = false
		}
	}
	for path := range PathsNamedBy(p, p.Job) {
		out[path] = true
	}
	return out
}

// PathsNamedBy are the states one status of the owner names for its restores.
func PathsNamedBy(p *Pass, st *v1beta1.JobOwnerStatus) map[string]bool {
	out := map[string]bool{st.Deployments.NextRestorePath: true, st.JobStatus.RestorePath: true,
		st.FinalSavepointPath: true, st.SavepointPath: true}
	named := p.JobState()
	named.Status = st
	for _, r := range []*v1beta1.DeploymentRecord{jobstate.Stable(st), jobstate.Candidate(st)} {
		if r != nil {
			out[r.RestorePath] = true
			out[named.NewestStatePath(r.JobID)] = true
			out[named.NewestWrittenStatePath(r.JobID)] = true
			if !checkpointsOutliveJob(p, r.JobID) {
				out[ledger.Of(&st.Ledger).NewestSavepointPath(r.JobID)] = true
			}
		}
	}
	// What a rollback restores: the stable record may no longer name its job once that job was
	// stopped for an update, and a redeploy does not start from its stop's savepoint.
	out[jobstate.StableFloor(st, func(jobID string) []jobs.StatePoint { return p.JobState().BookPoints(jobID) })] = true
	delete(out, "")
	return out
}

// checkpointsOutliveJob tells whether the job's checkpoints stay on storage however it ends (a
// cancel or a failure), as the configuration it runs with says: its newest checkpoint then stands
// for its newest state.
func checkpointsOutliveJob(p *Pass, jobID string) bool {
	conf := p.Kind.RunConfig(jobID)
	return flink.CheckpointsSurviveEnd(conf, client.JobCanceled) && flink.CheckpointsSurviveEnd(conf, client.JobFailed)
}
