package flinkapplication

import (
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Retention of the savepoint FlinkSnapshots the operator made for an owner: the newest keep of
// them stay (spec.savepointRetention.keep, else the operator's snapshotKeep), and none older than
// maxAge (spec.savepointRetention.maxAge, else the operator's snapshotMaxAge; zero for none). Never
// the one the owner's restore needs (protectedPaths), one marked spec.keep, nor one another
// application or session job of the namespace restores from. A FlinkSnapshot a user created is
// theirs to delete. Deleting one with disposeOnDelete disposes of its storage (snapshot_requests.go).

// retentionPerPass bounds the FlinkSnapshots one pass deletes.
const retentionPerPass = 5

// retainSnapshots deletes the owner's savepoint FlinkSnapshots that retention lets go.
func retainSnapshots(rc *Context) {
	if rc.Job == nil || rc.env.Apps == nil || rc.Meta.DeletionTimestamp != nil || rc.mayAct() != nil {
		return
	}
	gone := snapshotsPastRetention(rc)
	if len(gone) == 0 {
		return
	}
	usedElsewhere, err := restoredByOthers(rc)
	if err != nil {
		// Not knowing what other shards restore from, nothing is retired: the next pass tries again.
		klog.FromContext(rc).Error(err, "reading what other shards restore from; no FlinkSnapshot is retired this pass")
		return
	}
	deleted := 0
	for _, s := range gone {
		if usedElsewhere[s.Status.Path] || usedElsewhere[snapshotRef(s.Name)] || deleted == retentionPerPass {
			continue
		}
		err := rc.env.Apps.FlinkV1beta1().FlinkSnapshots(s.Namespace).Delete(rc, s.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &s.UID}})
		if err != nil {
			klog.FromContext(rc).Error(err, "deleting a FlinkSnapshot past retention", "snapshot", s.Name)
			return
		}
		deleted++
		rc.event(false, "SnapshotRetired", fmt.Sprintf("FlinkSnapshot %s (%s) is past retention and was deleted", s.Name, s.Status.Path))
	}
}

// snapshotsPastRetention are the operator's completed savepoint FlinkSnapshots of the owner that
// fall outside its retention, oldest first.
func snapshotsPastRetention(rc *Context) []*v1beta1.FlinkSnapshot {
	keep, maxAge := retention(rc)
	var mine []*v1beta1.FlinkSnapshot
	for _, s := range rc.Snapshots {
		if s.Annotations[LedgerEntryAnnotation] != "" && s.DeletionTimestamp == nil && s.Spec.Type != v1beta1.SnapshotCheckpoint &&
			s.Status.State == v1beta1.StateCompleted && s.Status.Path != "" {
			mine = append(mine, s)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return snapshotTime(mine[i]).After(snapshotTime(mine[j])) })
	protected := protectedPaths(rc)
	var out []*v1beta1.FlinkSnapshot
	for i, s := range mine {
		old := maxAge > 0 && rc.Now.Sub(snapshotTime(s)) > maxAge
		if (i >= keep && keep > 0 || old) && !s.Spec.Keep && !protected[s.Status.Path] {
			out = append(out, s)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// retention is how many of its savepoint FlinkSnapshots the owner keeps and for how long (0: no
// limit): its spec's savepointRetention, else the operator's.
func retention(rc *Context) (keep int, maxAge time.Duration) {
	keep, maxAge = rc.Config.SnapshotKeep, rc.Config.SnapshotMaxAge.Duration
	if ret := rc.Settings.SavepointRetention; ret != nil {
		if ret.Keep > 0 {
			keep = int(ret.Keep)
		}
		if ret.MaxAge != nil {
			maxAge = ret.MaxAge.Duration
		}
	}
	return keep, maxAge
}

// snapshotTime is when a FlinkSnapshot's state was taken, as far as its status says.
func snapshotTime(s *v1beta1.FlinkSnapshot) time.Time {
	switch {
	case s.Status.TriggerTime != nil:
		return s.Status.TriggerTime.Time
	case s.Status.ResultTime != nil:
		return s.Status.ResultTime.Time
	}
	return s.CreationTimestamp.Time
}

// restoredByOthers are the states other applications and session jobs of the namespace run from
// or will start from, by path, those they were redeployed from within the owner's retention window
// (their ledger's Redeploy entries), and the FlinkSnapshots their specs name (snapshotRef): a
// snapshot moved between applications is not retired under them. Those of other shards are not in
// this operator's caches and are read live (otherShardRestores).
func restoredByOthers(rc *Context) (map[string]bool, error) {
	_, window := retention(rc)
	var refs []restoreRefs
	if apps, err := rc.env.Observer.ApplicationsIn(rc.Meta.Namespace); err == nil {
		for _, a := range apps {
			refs = append(refs, refsOf(applicationKindName, a.Name, a.Spec.RestoreSnapshot, &a.Status.JobOwnerStatus))
		}
	}
	if rc.env.Sessions != nil {
		if jobs, err := rc.env.Sessions.SessionJobsIn(rc.Meta.Namespace); err == nil {
			for _, j := range jobs {
				refs = append(refs, refsOf(sessionJobKindName, j.Name, j.Spec.Job.RestoreSnapshot, &j.Status.JobOwnerStatus))
			}
		}
	}
	if rc.env.Shard != nil {
		others, err := rc.env.otherShardRestores(rc, rc.Meta.Namespace)
		if err != nil {
			return nil, err
		}
		refs = append(refs, others...)
	}
	out := map[string]bool{}
	for _, r := range refs {
		if r.kind == rc.kind.name && r.name == rc.Meta.Name {
			continue
		}
		if r.named != "" {
			out[snapshotRef(r.named)] = true
		}
		for _, p := range r.paths {
			out[p] = true
		}
		for _, e := range r.redeploys {
			if window == 0 || rc.Now.Sub(e.Time.Time) <= window {
				out[e.Path] = true
			}
		}
	}
	delete(out, "")
	return out, nil
}

// restoreRefs is what one application or session job restores from, as restoredByOthers reads it.
type restoreRefs struct {
	kind, name string
	// named is the FlinkSnapshot its spec names.
	named string
	// paths are the states it runs from or will start from.
	paths []string
	// redeploys are its ledger's Redeploy entries, with their path and time only.
	redeploys []v1beta1.StateEntry
}

func refsOf(kind, name, named string, st *v1beta1.JobOwnerStatus) restoreRefs {
	r := restoreRefs{kind: kind, name: name, named: named, paths: []string{st.JobStatus.RestorePath, st.Deployments.NextRestorePath}}
	for _, d := range []*v1beta1.DeploymentRecord{stable(st), candidate(st)} {
		if d != nil {
			r.paths = append(r.paths, d.RestorePath)
		}
	}
	for _, e := range st.Ledger {
		if e.Purpose == v1beta1.SavepointRedeploy && e.Time != nil {
			r.redeploys = append(r.redeploys, v1beta1.StateEntry{Path: e.Path, Time: e.Time})
		}
	}
	return r
}

// snapshotRef keys a FlinkSnapshot by name among paths, which always hold "/" or ":".
func snapshotRef(name string) string { return "snapshot " + name }
