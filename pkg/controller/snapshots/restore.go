package snapshots

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// A spec may name the state its first job, or each savepointRedeployNonce, starts from by a
// FlinkSnapshot (restoreSnapshot) instead of a path, including one of another application: that is
// how state moves between applications. The snapshot's path is read at each pass; until it has
// one, nothing starts from it, and the phase says what it waits for.

// Lookup reads a FlinkSnapshot of the namespace by name (watch.Observer's Snapshot).
type Lookup func(namespace, name string) (*v1beta1.FlinkSnapshot, error)

// ResolveRestore reads the path of the FlinkSnapshot the settings' RestoreSnapshot names into their
// InitialSavepoint and RedeployFrom, or says in RestoreWaiting why there is none yet.
func ResolveRestore(lookup Lookup, namespace string, s *jobstate.Settings) {
	if s == nil || s.RestoreSnapshot == "" {
		return
	}
	path, waiting := RestorePath(lookup, namespace, s.RestoreSnapshot)
	s.InitialSavepoint, s.RedeployFrom, s.RestoreWaiting = path, path, waiting
	if waiting != "" {
		s.RestoreWaiting = fmt.Sprintf("%s names %s", s.Field("restoreSnapshot"), waiting)
	}
}

// RestorePath is where the named FlinkSnapshot's state is, or why that is not known.
func RestorePath(lookup Lookup, namespace, name string) (path, waiting string) {
	snap, err := lookup(namespace, name)
	switch {
	case apierrors.IsNotFound(err) || err == nil && snap == nil:
		return "", fmt.Sprintf("FlinkSnapshot %s, which does not exist", name)
	case err != nil:
		return "", fmt.Sprintf("FlinkSnapshot %s, which cannot be read: %v", name, err)
	case snap.DeletionTimestamp != nil:
		// Retired or deleted, its storage may be disposed of at any pass: nothing starts from it.
		return "", fmt.Sprintf("FlinkSnapshot %s, which is being deleted", name)
	case snap.Status.State == v1beta1.StateFailed:
		return "", fmt.Sprintf("FlinkSnapshot %s, which failed: %s", name, snap.Status.Error)
	case snap.Status.State != v1beta1.StateCompleted || snap.Status.Path == "":
		return "", fmt.Sprintf("FlinkSnapshot %s, which is not Completed yet", name)
	}
	return snap.Status.Path, ""
}
