package flinkapplication

import (
	"fmt"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// What the guardian of durable state (package guardian) is told, and asked: every deletion of a
// savepoint's storage, of a FlinkSnapshot by retention, and of Flink's HA ConfigMaps asks it
// first, with what every application and session job of the namespace names, this shard's and the
// others'. It is read only when something is about to go: a pass that deletes nothing pays nothing.

// stateGuardian is the guardian of the owner's namespace as this pass sees it. disposing says that
// storage goes on its word: other shards are then read now, not from a read seconds old.
func stateGuardian(rc *Context, disposing bool) (*guardian.Namespace, error) {
	_, window := retention(rc)
	var refs []restoreRefs
	if apps, err := rc.env.Observer.ApplicationsIn(rc.Meta.Namespace); err == nil {
		for _, a := range apps {
			if applicationKindName == rc.kind.name && a.Name == rc.Meta.Name {
				// The owner itself is told from its pass, with its checkpoint book (ownReferences).
				continue
			}
			refs = append(refs, applicationRefs(a))
		}
	} else {
		return nil, fmt.Errorf("reading the namespace's applications: %w", err)
	}
	if rc.env.Sessions != nil {
		jobs, err := rc.env.Sessions.SessionJobsIn(rc.Meta.Namespace)
		if err != nil {
			return nil, fmt.Errorf("reading the namespace's session jobs: %w", err)
		}
		for _, j := range jobs {
			if sessionJobKindName == rc.kind.name && j.Name == rc.Meta.Name {
				continue
			}
			refs = append(refs, sessionJobStateRefs(j))
		}
		clusters, err := rc.env.Sessions.SessionClustersIn(rc.Meta.Namespace)
		if err != nil {
			return nil, fmt.Errorf("reading the namespace's session clusters: %w", err)
		}
		for _, c := range clusters {
			// What the jobs left running on it started from: a job of a session job deleted
			// with deleteMode None runs on, from that state (session_left_jobs.go).
			refs = append(refs, sessionClusterRefs(c))
		}
	}
	if rc.env.Shard != nil {
		others, err := rc.env.otherShardRestores(rc, rc.Meta.Namespace, disposing)
		if err != nil {
			return nil, fmt.Errorf("reading what other shards restore from: %w", err)
		}
		refs = append(refs, others...)
	}
	all := []guardian.References{ownReferences(rc)}
	for _, r := range refs {
		all = append(all, r.references(rc.Now, window))
	}
	snapshots, err := rc.env.Observer.SnapshotsIn(rc.Meta.Namespace)
	if err != nil {
		return nil, fmt.Errorf("reading the namespace's FlinkSnapshots: %w", err)
	}
	snaps := make([]guardian.Snapshot, 0, len(snapshots))
	for _, s := range snapshots {
		path := s.Status.Path
		if path == "" {
			// One registering a path shows it from the moment it exists, before its status is written.
			path = s.Spec.Path
		}
		snaps = append(snaps, guardian.Snapshot{Name: s.Name, Path: path})
		if s.DeletionTimestamp == nil && path != "" && s.Spec.Type != v1beta1.SnapshotCheckpoint {
			// A FlinkSnapshot shows its savepoint to its users (one kept with spec.keep, one a
			// user registered for the same path): while it is there, the storage stays.
			all = append(all, guardian.References{Holder: guardian.Holder{Kind: guardian.SnapshotKind, Name: s.Name, UID: string(s.UID)},
				Paths: []guardian.Use{{Name: path, Why: "it shows this savepoint"}}})
		}
	}
	return guardian.NewNamespace(all, snaps), nil
}

// ownReferences is what the owner's own restore may need, read with its checkpoint book: the
// newest state of each job it records (protectedPaths), and what its spec names.
func ownReferences(rc *Context) guardian.References {
	out := guardian.References{Holder: holderOf(rc.kind.name, rc.Meta)}
	paths := protectedPaths(rc)
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		why := "its restore may need it"
		if !paths[p] {
			why = storedUntilWrite
		}
		out.Paths = append(out.Paths, guardian.Use{Name: p, Why: why})
	}
	if s := rc.Settings; s != nil {
		// Pending by the status as stored counts as much as by the pass's own, until the write.
		if p := pendingSpecPath(s.InitialSavepoint, s.RedeployNonce, rc.Job); p != "" {
			out.Paths = append(out.Paths, guardian.Use{Name: p, Why: "its spec names it"})
		} else if rc.Stored != nil && rc.storedJob != nil {
			if p := pendingSpecPath(s.InitialSavepoint, s.RedeployNonce, rc.storedJob); p != "" {
				out.Paths = append(out.Paths, guardian.Use{Name: p, Why: storedUntilWrite})
			}
		}
		if s.RestoreSnapshot != "" {
			out.Snapshots = append(out.Snapshots, guardian.Use{Name: s.RestoreSnapshot, Why: s.Field("restoreSnapshot")})
		}
	}
	return out
}

// storedUntilWrite is why the owner needs a state its stored status names and the pass's own no
// longer does: until the pass's status write.
const storedUntilWrite = "its status as stored names it until this pass writes status"

// onlyUntilThisWrite tells whether nothing needs the state but the owner's stored status, which
// this pass's write stops naming it in.
func onlyUntilThisWrite(v guardian.Verdict) bool {
	for _, n := range v.Needs {
		if n.Why != storedUntilWrite {
			return false
		}
	}
	return len(v.Needs) > 0
}

// pendingSpecPath is the savepoint a spec names (spec.savepointPath, a session job's
// initialSavepointPath) while it is still to be used: before the object's first job ran, or while a
// savepointRedeployNonce is not yet done. Once used, the state the job started from is in its
// records, and a path left in the spec is history (Lyft's users keep it in their manifests). The
// FlinkSnapshot a spec names by restoreSnapshot is needed for as long as the spec names it.
func pendingSpecPath(path, nonce string, st *v1beta1.JobOwnerStatus) string {
	firstPending := st == nil || stable(st) == nil || stable(st).JobID == ""
	redeployPending := nonce != "" && (st == nil || nonce != st.SavepointRedeployNonce)
	if firstPending || redeployPending {
		return path
	}
	return ""
}

func holderOf(kind string, meta *metav1.ObjectMeta) guardian.Holder {
	return guardian.Holder{Kind: kind, Name: meta.Name, UID: string(meta.UID)}
}

// restoreRefs is what one application or session job names of durable state, as read from the
// object (of this shard's caches, or read live from another shard's).
type restoreRefs struct {
	holder guardian.Holder
	// named is the FlinkSnapshot its spec names.
	named string
	// specPath is the savepoint its spec names for its first job or a redeploy.
	specPath string
	// paths are the states it runs from or will start from, its final savepoint, and the newest
	// state and the newest savepoint of each job it records.
	paths []string
	// redeploys are its ledger's Redeploy entries, with their path and time only.
	redeploys []v1beta1.StateEntry
}

// applicationRefs and sessionJobStateRefs are what an object of either kind names, the same in every
// shard: the path its spec's first deploy or redeploy starts from (as the pass reads it, Lyft's
// savepointInfo included) while it is still to be used.
func applicationRefs(a *v1beta1.FlinkApplication) restoreRefs {
	st := &a.Status.JobOwnerStatus
	return refsOf(applicationKindName, a.ObjectMeta, pendingSpecPath(initialSavepoint(a), a.Spec.SavepointRedeployNonce, st), a.Spec.RestoreSnapshot, st)
}

func sessionJobStateRefs(j *v1beta1.FlinkSessionJob) restoreRefs {
	st := &j.Status.JobOwnerStatus
	return refsOf(sessionJobKindName, j.ObjectMeta, pendingSpecPath(j.Spec.Job.InitialSavepointPath, j.Spec.Job.SavepointRedeployNonce, st), j.Spec.Job.RestoreSnapshot, st)
}

func refsOf(kind string, meta metav1.ObjectMeta, specPath, named string, st *v1beta1.JobOwnerStatus) restoreRefs {
	r := restoreRefs{holder: holderOf(kind, &meta), named: named, specPath: specPath,
		paths: []string{st.JobStatus.RestorePath, st.Deployments.NextRestorePath, st.FinalSavepointPath, st.SavepointPath}}
	l := ledger.Of(&st.Ledger)
	for _, d := range []*v1beta1.DeploymentRecord{stable(st), candidate(st)} {
		if d != nil {
			// The newest savepoint too, whatever the job's retention policy, which the other
			// objects of the namespace do not read: a checkpoint may go with its job (attack
			// review s8: another object's FlinkSnapshot disposed of it).
			r.paths = append(r.paths, d.RestorePath, l.NewestPath(d.JobID), l.NewestSavepointPath(d.JobID))
		}
	}
	r.paths = append(r.paths, stableFloor(st, nil))
	for _, e := range st.Ledger {
		if e.Purpose == v1beta1.SavepointRedeploy && e.Time != nil {
			r.redeploys = append(r.redeploys, v1beta1.StateEntry{Path: e.Path, Time: e.Time})
		}
	}
	return r
}

// references are what the guardian is told of one object: its redeploys count within the window
// of the retention that asks (0: all).
func (r restoreRefs) references(now time.Time, window time.Duration) guardian.References {
	out := guardian.References{Holder: r.holder}
	add := func(path, why string) {
		if path != "" {
			out.Paths = append(out.Paths, guardian.Use{Name: path, Why: why})
		}
	}
	for _, p := range r.paths {
		add(p, "its jobs run from it or will start from it")
	}
	add(r.specPath, "its spec names it")
	for _, e := range r.redeploys {
		if window == 0 || now.Sub(e.Time.Time) <= window {
			add(e.Path, "it was redeployed from it at "+e.Time.UTC().Format(time.RFC3339))
		}
	}
	if r.named != "" {
		out.Snapshots = append(out.Snapshots, guardian.Use{Name: r.named, Why: "its spec's restoreSnapshot names"})
	}
	return out
}

// mayDispose asks the guardian whether the storage of a savepoint (shown by a FlinkSnapshot or not)
// may go; when it may not, an Event names who needs it.
func mayDispose(rc *Context, g *guardian.Namespace, path, snapshot string) bool {
	v := g.MayDelete(guardian.State{Path: path, Snapshot: snapshot})
	if !v.MayGo() {
		rc.event(false, "StateKept", v.String())
	}
	return v.MayGo()
}

// haGuardian is the guardian asked before Flink's HA ConfigMaps of one of the owner's cluster ids
// are deleted. It knows the clusters the owner runs or may run again from them (unless the owner
// is being deleted and lets them all go), and those of the objects of the other kinds that share
// its name: a FlinkApplication and a FlinkSessionCluster of one name render cluster ids of one form.
func haGuardian(rc *Context, ownInUse bool) *guardian.Namespace {
	own := guardian.References{Holder: holderOf(rc.kind.name, rc.Meta)}
	if ownInUse {
		for hash := range rc.HAConfigMaps {
			if haClusterInUse(rc, hash) {
				own.HAClusters = append(own.HAClusters, guardian.Use{Name: flink.HAClusterIDOf(rc.Meta.Name, hash), Why: "a cluster of it runs, or may run again, from them"})
			}
		}
	}
	refs := []guardian.References{own}
	namesake := func(kind string, meta metav1.ObjectMeta, hashes ...string) {
		r := guardian.References{Holder: holderOf(kind, &meta)}
		for _, h := range hashes {
			if h != "" {
				r.HAClusters = append(r.HAClusters, guardian.Use{Name: flink.HAClusterIDOf(meta.Name, h), Why: "its cluster"})
			}
		}
		refs = append(refs, r)
	}
	if rc.kind.name != applicationKindName {
		if a, err := rc.env.Observer.Application(rc.Meta.Namespace, rc.Meta.Name); err == nil && a != nil {
			hashes := []string{a.Status.DeployHash, a.Status.UpdatingHash}
			for _, r := range []*v1beta1.DeploymentRecord{stable(&a.Status.JobOwnerStatus), candidate(&a.Status.JobOwnerStatus)} {
				if r != nil {
					hashes = append(hashes, r.ClusterHash)
				}
			}
			namesake(applicationKindName, a.ObjectMeta, hashes...)
		}
	}
	if rc.kind.name != sessionClusterKindName && rc.env.Sessions != nil {
		if c, err := rc.env.Sessions.SessionCluster(rc.Meta.Namespace, rc.Meta.Name); err == nil && c != nil {
			namesake(sessionClusterKindName, c.ObjectMeta, c.Status.DeployHash, c.Status.UpdatingHash)
		}
	}
	return guardian.NewNamespace(refs, nil)
}

// ownClusterHashes are the clusters this very object's status names (its deploy and updating
// hashes, its records, its ledger's entries, the versions it ran), and the spec's cluster when its
// JobManager Deployment is this object's. A cluster id of its name with
// another hash was left by a namesake (one deleted with deleteMode None, or one of another kind):
// its HA ConfigMaps are not this object's to delete.
func ownClusterHashes(rc *Context) map[string]bool {
	out := map[string]bool{}
	if c := rc.Clusters[rc.Hash]; c != nil && c.JobManager != nil && metav1.IsControlledBy(c.JobManager, rc.Meta) {
		// The spec's cluster, made by this very object (its status may not name it yet).
		out[rc.Hash] = true
	}
	if o := rc.Owned; o != nil {
		out[o.DeployHash], out[o.UpdatingHash] = true, true
	}
	if j := rc.Job; j != nil {
		for _, r := range []*v1beta1.DeploymentRecord{stable(j), candidate(j)} {
			if r != nil {
				out[r.ClusterHash] = true
			}
		}
		for _, e := range j.Ledger {
			out[e.ClusterHash] = true
		}
	}
	if a := rc.App; a != nil {
		out[a.Status.RollbackHash], out[a.Status.TeardownHash], out[a.Status.InPlaceUpdatedFromHash] = true, true, true
		for _, v := range a.Status.VersionStatuses {
			out[v.VersionHash], out[v.JobStatus.ClusterHash] = true, true
		}
	}
	delete(out, "")
	return out
}

// mayRemoveHAConfigMaps tells whether the HA ConfigMaps of the owner's cluster with this hash may be
// deleted: the cluster is the object's own, and the guardian knows nothing that needs them.
func mayRemoveHAConfigMaps(rc *Context, g *guardian.Namespace, own map[string]bool, hash string) bool {
	if !own[hash] {
		return false
	}
	v := g.MayDelete(guardian.State{HACluster: flink.HAClusterIDOf(rc.Meta.Name, hash)})
	return v.MayGo()
}
