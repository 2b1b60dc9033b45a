package snapshots

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
	"github.com/flinkfsm/flinkfsm/pkg/controller/watch"
)

// A FlinkSnapshot outlives its owner: the final savepoint of a deleted application is what one
// restores from. Deleted with disposeOnDelete after its owner went, it waits for its storage to be
// disposed of through a JobManager of that owner, which will not come; its owner's pass, which
// answers every other FlinkSnapshot, does not run. This pass says so in the object, with what to do.

// Orphans answers the deleted FlinkSnapshots whose owner is gone.
type Orphans struct {
	Observer watch.Observer
	// Sessions reads the session kinds; nil when the operator runs none.
	Sessions watch.SessionObserver
	// Others reads the other shards (Others.Shard nil: the operator owns all).
	Others ShardReader
	// Fence says why this replica may not write now (nil: it may); nil lets every write through.
	Fence        func() error
	Apps         versioned.Interface
	FieldManager string
}

// Answer writes, on a deleted FlinkSnapshot held by DisposeFinalizer whose owner does not exist,
// why it waits. Nothing else of it changes until the FlinkSnapshot or its owner does.
func (o Orphans) Answer(ctx context.Context, namespace, name string) error {
	s, err := o.Observer.Snapshot(namespace, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if s.DeletionTimestamp == nil || !slices.Contains(s.Finalizers, DisposeFinalizer) {
		return nil
	}
	owner := s.Spec.Owner
	switch owner.Kind {
	case v1beta1.FlinkApplicationKind:
		_, err = o.Observer.Application(namespace, owner.Name)
	case v1beta1.FlinkSessionJobKind:
		if o.Sessions == nil {
			return nil
		}
		_, err = o.Sessions.SessionJob(namespace, owner.Name)
	}
	if !apierrors.IsNotFound(err) {
		// The owner's pass answers it, or the owner cannot be read now and a later event brings it back.
		return nil
	}
	if o.Others.Shard != nil {
		// Not in this shard's cache: the owner may be in another shard, whose operator answers.
		if elsewhere, err := o.Others.OwnerExists(ctx, namespace, owner.Kind, owner.Name); err != nil || elsewhere {
			return err
		}
	}
	why := fmt.Sprintf("%s %s does not exist, so no JobManager of it can dispose of %s through Flink; remove finalizer %s to "+
		"delete this FlinkSnapshot without disposing of its storage", owner.Kind, owner.Name, s.Status.Path, DisposeFinalizer)
	if s.Status.Error == why {
		return nil
	}
	if o.Fence != nil {
		if err := o.Fence(); err != nil {
			return err
		}
	}
	s = s.DeepCopy()
	s.Status.Error = why
	_, err = o.Apps.FlinkV1beta1().FlinkSnapshots(namespace).UpdateStatus(ctx, s, metav1.UpdateOptions{FieldManager: o.FieldManager})
	return err
}
