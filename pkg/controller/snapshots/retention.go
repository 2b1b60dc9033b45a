package snapshots

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// Retention of the savepoint FlinkSnapshots the operator made for an owner: the newest keep of
// them stay (spec.savepointRetention.keep, else the operator's snapshotKeep), and none older than
// maxAge (spec.savepointRetention.maxAge, else the operator's snapshotMaxAge; zero for none). Never
// one marked spec.keep, nor one the guardian of durable state says anything still needs (the
// owner's restore, any spec or record of the namespace: Namespace.Guardian). Only the FlinkSnapshots
// made for this very object count, told by identity (madeForThisObject), never by name. A FlinkSnapshot a user created is
// theirs to delete. Deleting one with disposeOnDelete disposes of its storage (requests.go).

// RetentionPerPass bounds the FlinkSnapshots one pass deletes.
const RetentionPerPass = 5

// Retention is how many of its savepoint FlinkSnapshots an owner keeps, and for how long (0: no
// limit).
type Retention struct {
	Keep   int
	MaxAge time.Duration
}

// Retain deletes the owner's savepoint FlinkSnapshots that retention lets go, when the guardian
// (read only when one is due) says nothing needs their state. kept remembers, under the owner's
// key, what the guardian kept.
func Retain(ctx context.Context, p Pass, r Retention, kept *Kept, key string, guardianOf func() (*guardian.Namespace, error)) {
	gone := pastRetention(p, r)
	before, notes := kept.of(key, string(p.Meta.UID)), map[string]keptNote{}
	var ask []*v1beta1.FlinkSnapshot
	for _, s := range gone {
		if n, ok := before[s.Status.Path]; ok && n.recent(p.Now) {
			notes[s.Status.Path] = n
			continue
		}
		ask = append(ask, s)
	}
	defer func() { kept.store(key, string(p.Meta.UID), notes) }()
	if len(ask) == 0 {
		return
	}
	g, err := guardianOf()
	if err != nil {
		// Not knowing what every object of the namespace needs, nothing is retired: the next pass
		// tries again.
		klog.FromContext(ctx).Error(err, "no FlinkSnapshot is retired this pass")
		return
	}
	deleted := 0
	for _, s := range ask {
		if deleted == RetentionPerPass {
			break
		}
		if v := g.MayDelete(guardian.State{Path: s.Status.Path, Snapshot: s.Name}); !v.MayGo() {
			if before[s.Status.Path].why != v.String() {
				p.Announce(false, "StateKept", v.String())
			}
			// Kept for another object, it is asked about again in a while; kept only until a
			// savepoint's answer is read, next pass.
			notes[s.Status.Path] = keptNote{why: v.String(), at: p.Now, untilAnswered: v.OnlyUntilAnswered()}
			continue
		}
		err := p.Apps.FlinkV1beta1().FlinkSnapshots(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &s.UID}})
		if err != nil {
			klog.FromContext(ctx).Error(err, "deleting a FlinkSnapshot past retention", "snapshot", s.Name)
			return
		}
		deleted++
		p.Announce(false, "SnapshotRetired", fmt.Sprintf("FlinkSnapshot %s (%s) is past retention and was deleted", s.Name, s.Status.Path))
	}
}

// pastRetention are the operator's completed savepoint FlinkSnapshots of the owner that fall
// outside its retention, oldest first.
func pastRetention(p Pass, r Retention) []*v1beta1.FlinkSnapshot {
	keep, maxAge := r.Keep, r.MaxAge
	var mine []*v1beta1.FlinkSnapshot
	for _, s := range p.Snapshots {
		if madeForThisObject(p, s) && s.DeletionTimestamp == nil && s.Spec.Type != v1beta1.SnapshotCheckpoint &&
			s.Status.State == v1beta1.StateCompleted && s.Status.Path != "" {
			mine = append(mine, s)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return TakenAt(mine[i]).After(TakenAt(mine[j])) })
	var out []*v1beta1.FlinkSnapshot
	for i, s := range mine {
		old := maxAge > 0 && p.Now.Sub(TakenAt(s)) > maxAge
		if (i >= keep && keep > 0 || old) && !s.Spec.Keep {
			out = append(out, s)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// TakenAt is when a FlinkSnapshot's state was taken, as far as its status says.
func TakenAt(s *v1beta1.FlinkSnapshot) time.Time {
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
func madeForThisObject(p Pass, s *v1beta1.FlinkSnapshot) bool {
	entry := s.Annotations[LedgerEntryAnnotation]
	if entry == "" {
		return false
	}
	for _, e := range *p.Ledger {
		if e.Snapshot == s.Name {
			return true
		}
	}
	jobID, _, _ := strings.Cut(entry, "/")
	return jobstate.OwnerOf(p.Kind, p.Meta).Started(jobID)
}
