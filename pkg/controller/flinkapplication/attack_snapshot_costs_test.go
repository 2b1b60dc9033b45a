package flinkapplication

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// Attacks on what one tenant's FlinkSnapshots may cost one pass.

// docs/security.md bounds what one pass spends on an owner's FlinkSnapshots (retention deletes at
// most 5 a pass, the operator creates at most 3). A tenant may create as many FlinkSnapshots as
// its quota lets it, each registering a path with disposeOnDelete, and delete them all at once;
// its JobManager (its own image) answers each disposal slowly. One pass of the owner must still
// make a bounded number of disposal calls and hold its worker a bounded time: the rest waits for
// the next passes, as retention's deletions do.
func TestAPassDisposesOfABoundedNumberOfDeletedFlinkSnapshots(t *testing.T) {
	w := newWorld(t)
	running(t, w, "wc")
	const many = 40
	for i := range many {
		w.createSnapshot(fmt.Sprintf("mine-%02d", i), func(s *v1beta1.FlinkSnapshotSpec) {
			s.Path, s.DisposeOnDelete = fmt.Sprintf("file:///checkpoints/savepoints/registered-%02d", i), true
		})
	}
	w.passes("wc", 5)
	for i := range many {
		s := w.snapshot(fmt.Sprintf("mine-%02d", i))
		require.Contains(t, s.Finalizers, snapshots.DisposeFinalizer)
		require.Equal(t, v1beta1.StateCompleted, s.Status.State)
	}
	var disposals atomic.Int64
	w.answerTime = func(r *http.Request) time.Duration {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/savepoint-disposal") {
			disposals.Add(1)
			return time.Second // a JobManager that takes its time
		}
		return 0
	}
	for i := range many {
		w.deleteSnapshot(fmt.Sprintf("mine-%02d", i))
	}
	w.settle()
	start := w.clock.Now()
	_, err := w.env.Reconcile(context.Background(), ns, "wc")
	require.NoError(t, err)
	took := w.clock.Now().Sub(start)
	t.Logf("one pass made %d disposal calls and took %s", disposals.Load(), took)
	assert.LessOrEqual(t, disposals.Load(), int64(snapshots.RetentionPerPass), "disposal calls of one pass")
	assert.LessOrEqual(t, took, 10*time.Second, "the time one pass holds its worker")
}
