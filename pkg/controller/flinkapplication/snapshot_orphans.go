package flinkapplication

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A FlinkSnapshot outlives its owner: the final savepoint of a deleted application is what one
// restores from. Deleted with disposeOnDelete after its owner went, it waits for its storage to be
// disposed of through a JobManager of that owner, which will not come; its owner's pass, which
// answers every other FlinkSnapshot, does not run. This pass says so in the object, with what to do.

// reconcileOrphanedSnapshot writes, on a deleted FlinkSnapshot held by DisposeFinalizer whose owner
// does not exist, why it waits.
func (e *Environment) reconcileOrphanedSnapshot(ctx context.Context, namespace, name string) (time.Duration, error) {
	s, err := e.Observer.Snapshot(namespace, name)
	if apierrors.IsNotFound(err) {
		return untilChanged, nil
	}
	if err != nil {
		return 0, err
	}
	if s.DeletionTimestamp == nil || !slices.Contains(s.Finalizers, DisposeFinalizer) {
		return untilChanged, nil
	}
	owner := s.Spec.Owner
	switch owner.Kind {
	case applicationKindName:
		_, err = e.Observer.Application(namespace, owner.Name)
	case sessionJobKindName:
		if e.Sessions == nil {
			return untilChanged, nil
		}
		_, err = e.Sessions.SessionJob(namespace, owner.Name)
	}
	if !apierrors.IsNotFound(err) {
		// The owner's pass answers it, or the owner cannot be read now and a later event brings it back.
		return untilChanged, nil
	}
	if e.Shard != nil {
		// Not in this shard's cache: the owner may be in another shard, whose operator answers.
		if elsewhere, err := e.ownerInOtherShard(ctx, namespace, owner.Kind, owner.Name); err != nil || elsewhere {
			return untilChanged, err
		}
	}
	why := fmt.Sprintf("%s %s does not exist, so no JobManager of it can dispose of %s through Flink; remove finalizer %s to "+
		"delete this FlinkSnapshot without disposing of its storage", owner.Kind, owner.Name, s.Status.Path, DisposeFinalizer)
	if s.Status.Error == why {
		return untilChanged, nil
	}
	if e.Acting != nil {
		if err := e.Acting(); err != nil {
			return 0, err
		}
	}
	s = s.DeepCopy()
	s.Status.Error = why
	_, err = e.Apps.FlinkV1beta1().FlinkSnapshots(namespace).UpdateStatus(ctx, s, metav1.UpdateOptions{FieldManager: fieldManager})
	return untilChanged, err
}
