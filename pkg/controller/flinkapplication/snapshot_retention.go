package flinkapplication

import (
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
)

// Retention of the savepoint FlinkSnapshots the operator made for an owner: the newest keep of
// them stay (spec.savepointRetention.keep, else the operator's snapshotKeep), and none older than
// maxAge (spec.savepointRetention.maxAge, else the operator's snapshotMaxAge; zero for none). Never
// one marked spec.keep, nor one the guardian of durable state says anything still needs (the
// owner's restore, any spec or record of the namespace: durable_state.go). Only the FlinkSnapshots
// made for this very object count, told by identity (madeForThisObject), never by name. A FlinkSnapshot a user created is
// theirs to delete. Deleting one with disposeOnDelete disposes of its storage (snapshot_requests.go).

// retentionPerPass bounds the FlinkSnapshots one pass deletes.
const retentionPerPass = 5

// retainSnapshots deletes the owner's savepoint FlinkSnapshots that retention lets go.
func retainSnapshots(rc *Context) {
	if rc.Job == nil || rc.env.Apps == nil || rc.Meta.DeletionTimestamp != nil || rc.mayAct() != nil {
		return
	}
	gone := snapshotsPastRetention(rc)
	before, notes := rc.env.kept.of(rc.writeKey(), string(rc.Meta.UID)), map[string]keptNote{}
	var ask []*v1beta1.FlinkSnapshot
	for _, s := range gone {
		if n, ok := before[s.Status.Path]; ok && n.recent(rc.Now) {
			notes[s.Status.Path] = n
			continue
		}
		ask = append(ask, s)
	}
	defer func() { rc.env.kept.store(rc.writeKey(), string(rc.Meta.UID), notes) }()
	if len(ask) == 0 {
		return
	}
	g, err := stateGuardian(rc, false)
	if err != nil {
		// Not knowing what every object of the namespace needs, nothing is retired: the next pass
		// tries again.
		klog.FromContext(rc).Error(err, "no FlinkSnapshot is retired this pass")
		return
	}
	deleted := 0
	for _, s := range ask {
		if deleted == retentionPerPass {
			break
		}
		if v := g.MayDelete(guardian.State{Path: s.Status.Path, Snapshot: s.Name}); !v.MayGo() {
			if before[s.Status.Path].why != v.String() {
				rc.event(false, "StateKept", v.String())
			}
			notes[s.Status.Path] = keptNote{why: v.String(), at: rc.Now}
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
		if madeForThisObject(rc, s) && s.DeletionTimestamp == nil && s.Spec.Type != v1beta1.SnapshotCheckpoint &&
			s.Status.State == v1beta1.StateCompleted && s.Status.Path != "" {
			mine = append(mine, s)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return snapshotTime(mine[i]).After(snapshotTime(mine[j])) })
	var out []*v1beta1.FlinkSnapshot
	for i, s := range mine {
		old := maxAge > 0 && rc.Now.Sub(snapshotTime(s)) > maxAge
		if (i >= keep && keep > 0 || old) && !s.Spec.Keep {
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

// madeForThisObject tells whether the operator made a FlinkSnapshot for this very object, not for
// an earlier one of the same name: its ledger names it, or the job it shows was started by this
// object (a job id carries its owner's uid, jobs.Owner).
func madeForThisObject(rc *Context, s *v1beta1.FlinkSnapshot) bool {
	entry := s.Annotations[LedgerEntryAnnotation]
	if entry == "" {
		return false
	}
	for _, e := range rc.Job.Ledger {
		if e.Snapshot == s.Name {
			return true
		}
	}
	jobID, _, _ := strings.Cut(entry, "/")
	return rc.owner().Started(jobID)
}
