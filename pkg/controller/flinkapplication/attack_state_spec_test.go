package flinkapplication

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Attacks on the guardian of durable state: what another object's spec names for its first job.

// The first deploy of an application restores spec.savepointPath or, when that is empty, its
// deprecated form spec.savepointInfo.savepointLocation (initialSavepoint). Retention must keep what
// either names for another application's first job, not only savepointPath.
func TestRetentionKeepsWhatAnotherApplicationsDeprecatedSavepointLocationNamesForItsFirstDeploy(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", retainOne)
	handover, _ := takeSavepoint(t, w, "wc", "handover")
	next := wordcount("next")
	next.Spec.SavepointInfo.SavepointLocation = handover
	w.create(next) // not deployed yet: its first job will start from handover
	takeSavepoint(t, w, "wc", "later")
	w.passes("wc", 5)
	assert.True(t, w.storage.Exists(handover), "another application's first job will start from it (spec.savepointInfo.savepointLocation)")
	kept := false
	for _, s := range w.snapshots() {
		kept = kept || s.Status.Path == handover && s.DeletionTimestamp == nil
	}
	assert.True(t, kept, "its FlinkSnapshot is not retired")
}

// The owner's own spec.restoreSnapshot keeps the state its FlinkSnapshot shows for as long as the
// spec names it, whichever FlinkSnapshot shows that state: here the user registered the savepoint
// under a name of their own (spec.path) and named that; the operator's FlinkSnapshot of the same
// savepoint must not be retired with its storage disposed of, as it is not when another
// application's spec names the registered one.
func TestRetentionKeepsTheStateTheOwnersRestoreSnapshotShowsUnderAnotherName(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", retainOne)
	path, _ := takeSavepoint(t, w, "wc", "good")
	w.createSnapshot("pinned", func(s *v1beta1.FlinkSnapshotSpec) { s.Path = path })
	w.passes("wc", 3)
	require.Equal(t, v1beta1.StateCompleted, w.snapshot("pinned").Status.State)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.RestoreSnapshot = "pinned" })
	takeSavepoint(t, w, "wc", "later")
	w.passes("wc", 5)
	assert.True(t, w.storage.Exists(path), "wc's spec names FlinkSnapshot pinned, which shows %s, for its next redeploy", path)
}

// A FlinkSnapshot with spec.keep is never retired, and the savepoint it shows must not go either:
// here the user registered the savepoint of one of wc's FlinkSnapshots under a name of their own,
// marked keep. Retention may retire wc's own FlinkSnapshot of it, but disposing of its storage
// leaves the kept FlinkSnapshot showing a savepoint that is gone.
func TestRetentionNeverDisposesOfTheSavepointAKeptFlinkSnapshotShows(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", retainOne)
	path, _ := takeSavepoint(t, w, "wc", "good")
	w.createSnapshot("pinned", func(s *v1beta1.FlinkSnapshotSpec) { s.Path, s.Keep = path, true })
	w.passes("wc", 3)
	require.Equal(t, v1beta1.StateCompleted, w.snapshot("pinned").Status.State)
	takeSavepoint(t, w, "wc", "later")
	w.passes("wc", 5)
	require.NotNil(t, w.snapshot("pinned"), "a kept FlinkSnapshot stays")
	assert.True(t, w.storage.Exists(path), "FlinkSnapshot pinned, marked keep, shows %s", path)
}

// A FlinkSnapshot past retention that another object still needs stays, and an Event says who
// needs it. That is news once: it must not be said again at every pass for as long as the other
// object needs it (durable_state.go: "a pass that deletes nothing pays nothing"), each time with a
// read of every application and session job of the namespace.
func TestAStateKeptForAnotherObjectIsSaidOnceNotAtEveryPass(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	w.update("wc", retainOne)
	handover, _ := takeSavepoint(t, w, "wc", "handover")
	next := wordcount("next")
	next.Spec.SavepointPath = handover
	w.create(next) // not deployed yet: it needs handover for as long as it is not
	takeSavepoint(t, w, "wc", "later")
	w.events()
	before := len(w.apps.Actions())
	w.passes("wc", 100)
	kept := 0
	for _, e := range w.events() {
		if strings.Contains(e, "StateKept") {
			kept++
		}
	}
	lists := 0
	for _, a := range w.apps.Actions()[before:] {
		if a.GetVerb() == "list" && a.GetResource().Resource == "flinkapplications" {
			lists++
		}
	}
	t.Logf("100 passes: %d StateKept Events, %d lists of the namespace's applications", kept, lists)
	assert.True(t, w.storage.Exists(handover))
	assert.LessOrEqual(t, kept, 1, "StateKept Events in 100 passes of wc while next needs %s", handover)
}
