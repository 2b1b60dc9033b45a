package apachefake

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Operator plays the Apache operator 1.16 on an API server for one FlinkDeployment or
// FlinkSessionJob: it reads the object every Poll and, once its spec asks for a suspend, stops the
// job as 1.16 does (Stop) and records that with one write of the status subresource. A job whose
// spec.job.upgradeMode is savepoint is stopped with a savepoint in SavepointDir, written by
// TakeSavepoint before anything names it; any other is stopped without one.
type Operator struct {
	Client   dynamic.Interface
	Resource schema.GroupVersionResource
	// Namespace and Name name the object.
	Namespace, Name string
	// TakeSavepoint stands in for the storage the job writes its savepoint to: called once for each
	// stop with a savepoint, before anything records it.
	TakeSavepoint func(path, jobID string) error
	// SnapshotResources is kubernetes.operator.snapshot.resource.enabled, on by default in 1.16
	// where the FlinkStateSnapshot CRD is installed: the savepoint is recorded by a FlinkStateSnapshot
	// the operator creates just before the status write (its status written by a later pass of
	// its snapshot controller) rather than in savepointInfo.
	SnapshotResources bool
	// Delay is how long a stop takes, from the first pass that sees the suspend to the status write
	// that records it: the stop-with-savepoint.
	Delay time.Duration
	// Poll is how often the object is read; 200ms when zero.
	Poll time.Duration
	// Logf, when set, is told what the operator does.
	Logf func(format string, args ...interface{})

	mu sync.Mutex
	// stops are the savepoints of the stops recorded ("" for one without a savepoint).
	stops []string
	// stopping is a stop under way: its savepoint taken, its status write not made yet.
	stopping *stopping
	seenAt   time.Time
	// uncompleted are the upgrade FlinkStateSnapshots created whose status is not written yet.
	uncompleted []string
	snapshots   []string
}

type stopping struct {
	stop Stop
	// snapshot is the name of its FlinkStateSnapshot, once created.
	snapshot string
}

// Stops are the savepoints of the stops the operator recorded, in order; "" for a stop without a
// savepoint.
func (o *Operator) Stops() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.stops...)
}

// Snapshots are the names of the FlinkStateSnapshots the operator created.
func (o *Operator) Snapshots() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.snapshots...)
}

// Run plays the operator until ctx ends. It returns ctx's error, or the first error that no pass
// of the operator would get past (an object it cannot read, a savepoint that cannot be written).
func (o *Operator) Run(ctx context.Context) error {
	poll := o.Poll
	if poll == 0 {
		poll = 200 * time.Millisecond
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if err := o.pass(ctx); err != nil && ctx.Err() == nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// pass is one reconcile of the snapshots the operator created and of the object.
func (o *Operator) pass(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.completeSnapshots(ctx); err != nil {
		return err
	}
	objects := o.Client.Resource(o.Resource).Namespace(o.Namespace)
	u, err := objects.Get(ctx, o.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s %s/%s: %w", o.Resource.Resource, o.Namespace, o.Name, err)
	}
	asked, err := SuspendAsked(u)
	if err != nil || !asked {
		return err
	}
	now := time.Now()
	if o.stopping == nil {
		if o.seenAt.IsZero() {
			o.seenAt = now
			o.logf("%s %s/%s: suspend asked; stopping the job", u.GetKind(), o.Namespace, o.Name)
		}
		if now.Sub(o.seenAt) < o.Delay {
			return nil
		}
		stop := Stop{CancelAt: o.seenAt.UnixMilli(), SnapshotResources: o.SnapshotResources}
		if mode, _, _ := unstructured.NestedString(u.Object, "spec", "job", "upgradeMode"); strings.ToLower(mode) == UpgradeSavepoint {
			dir := SavepointDir(u)
			if dir == "" {
				return fmt.Errorf("%s %s/%s: upgradeMode savepoint without a savepoint directory, which 1.16's validator refuses", u.GetKind(), o.Namespace, o.Name)
			}
			jobID, _, _ := unstructured.NestedString(u.Object, "status", "jobStatus", "jobId")
			stop.Savepoint = SavepointPath(dir, jobID)
			if err := o.TakeSavepoint(stop.Savepoint, jobID); err != nil {
				return fmt.Errorf("writing savepoint %s: %w", stop.Savepoint, err)
			}
			o.logf("%s %s/%s: job %s stopped with savepoint %s", u.GetKind(), o.Namespace, o.Name, jobID, stop.Savepoint)
		}
		o.stopping = &stopping{stop: stop}
	}
	stop := o.stopping.stop
	if stop.Savepoint != "" && stop.SnapshotResources && o.stopping.snapshot == "" {
		snap := stop.Snapshot(u, time.Now().UnixMilli())
		if _, err := o.Client.Resource(FlinkStateSnapshots).Namespace(o.Namespace).Create(ctx, snap, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating FlinkStateSnapshot %s: %w", snap.GetName(), err)
		}
		o.stopping.snapshot = snap.GetName()
		o.snapshots = append(o.snapshots, snap.GetName())
		o.uncompleted = append(o.uncompleted, snap.GetName())
		o.logf("%s %s/%s: created FlinkStateSnapshot %s", u.GetKind(), o.Namespace, o.Name, snap.GetName())
	}
	stop.ReconciledAt = time.Now().UnixMilli()
	if err := stop.Record(u); err != nil {
		return err
	}
	// The write may conflict with another writer's (the migration's annotations): the next pass
	// records the same stop on what is there then.
	if _, err := objects.UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: "flink-kubernetes-operator"}); err != nil {
		if apierrors.IsConflict(err) {
			return nil
		}
		return fmt.Errorf("writing the status of %s %s/%s: %w", u.GetKind(), o.Namespace, o.Name, err)
	}
	o.stops = append(o.stops, stop.Savepoint)
	o.stopping, o.seenAt = nil, time.Time{}
	o.logf("%s %s/%s: suspended (status written)", u.GetKind(), o.Namespace, o.Name)
	return nil
}

// completeSnapshots writes the status of the upgrade snapshots created by an earlier pass, as the
// snapshot controller's first reconcile of each does.
func (o *Operator) completeSnapshots(ctx context.Context) error {
	snapshots := o.Client.Resource(FlinkStateSnapshots).Namespace(o.Namespace)
	for len(o.uncompleted) > 0 {
		snap, err := snapshots.Get(ctx, o.uncompleted[0], metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading FlinkStateSnapshot %s: %w", o.uncompleted[0], err)
		}
		CompleteSnapshot(snap, time.Now())
		// Labels are the main resource's, the status its subresource's: two writes, as the
		// controller's status patch and its label update are.
		labels := snap.GetLabels()
		if snap, err = snapshots.UpdateStatus(ctx, snap, metav1.UpdateOptions{FieldManager: "flink-kubernetes-operator"}); err != nil {
			return fmt.Errorf("writing the status of FlinkStateSnapshot %s: %w", o.uncompleted[0], err)
		}
		snap.SetLabels(labels)
		if _, err := snapshots.Update(ctx, snap, metav1.UpdateOptions{FieldManager: "flink-kubernetes-operator"}); err != nil {
			return fmt.Errorf("labelling FlinkStateSnapshot %s: %w", o.uncompleted[0], err)
		}
		o.logf("FlinkStateSnapshot %s/%s: COMPLETED", o.Namespace, o.uncompleted[0])
		o.uncompleted = o.uncompleted[1:]
	}
	return nil
}

func (o *Operator) logf(format string, args ...interface{}) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}
