// Package snapshots keeps an owner's FlinkSnapshots (docs/snapshots.md): the objects that show its
// ledger's entries, the snapshots users ask for with them, their retention and the disposal of
// their storage, the path a spec's restoreSnapshot names, and what every object of a namespace
// names of durable state, which the guardian (package guardian) is told before anything goes.
//
// It takes values: the owner's pass hands in what it read (its FlinkSnapshots, its ledger, the
// time) and how it writes, and gets its Events through Announce. It knows no phase machine.
package snapshots

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
	"github.com/flinkfsm/flinkfsm/pkg/controller/ledger"
)

// Owner is the object whose FlinkSnapshots a pass keeps: a FlinkApplication or a FlinkSessionJob.
type Owner struct {
	Kind string
	Meta *metav1.ObjectMeta
}

// Pass is what one pass of an owner hands in.
type Pass struct {
	Owner
	// Apps writes FlinkSnapshots; FieldManager names the writes in managedFields.
	Apps         versioned.Interface
	FieldManager string
	// Snapshots are the owner's FlinkSnapshots, as the cache has them.
	Snapshots []*v1beta1.FlinkSnapshot
	// Ledger is the owner's ledger of savepoints and checkpoints; an entry names its FlinkSnapshot.
	Ledger *[]v1beta1.StateEntry
	Now    time.Time
	// Announce makes an Event of the owner.
	Announce func(warning bool, reason, message string)
}

func (p Pass) ledger() ledger.Ledger { return ledger.Of(p.Ledger) }

// newestEntryNaming is the newest ledger entry that names the FlinkSnapshot; nil when none does.
func (p Pass) newestEntryNaming(name string) *v1beta1.StateEntry {
	l := *p.Ledger
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].Snapshot == name {
			return &l[i]
		}
	}
	return nil
}
