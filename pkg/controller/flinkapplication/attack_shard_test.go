package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/snapshots"
)

// Attacks on the guardian across shards (shardSelector).

// savepointNow asks the named application's job for a manual savepoint by nonce and runs passes
// only until it is recorded, without letting time run on past it (takeSavepoint waits a minute).
func savepointNow(t *testing.T, w *world, name, nonce string) string {
	t.Helper()
	w.update(name, func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = v1beta1.Nonce(nonce) })
	app := w.runUntil(name, "savepoint "+nonce, func(a *v1beta1.FlinkApplication) bool {
		return a.Status.SavepointTriggerNonce == v1beta1.Nonce(nonce) && a.Status.SavepointTriggerID == ""
	})
	for i := len(app.Status.Ledger) - 1; i >= 0; i-- {
		if e := app.Status.Ledger[i]; e.Purpose == v1beta1.SavepointManual && e.Result == v1beta1.StateCompleted {
			return e.Path
		}
	}
	require.Fail(t, "no savepoint recorded")
	return ""
}

// docs/security.md: the guardian is told what every object of the namespace names, "this operator's
// shard and the others' (read live)". An application of another shard created to start from a
// savepoint must keep it from the moment it exists, not only once a read of the other shards made
// before it has aged past snapshots.OtherShardsFreshFor.
func TestRetentionKeepsWhatAnApplicationOfAnotherShardNamedSecondsAgo(t *testing.T) {
	w := newWorld(t)
	w.shardAs(shardKey + "=a")
	app := wordcount("wc")
	app.Labels = map[string]string{shardKey: "a"}
	retainOne(app)
	w.create(app)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	savepointNow(t, w, "wc", "1")
	handover := savepointNow(t, w, "wc", "2") // retention retires the first: it reads the other shards
	w.passes("wc", 3)
	named := w.clock.Now()

	next := wordcount("next")
	next.Labels = map[string]string{shardKey: "b"} // another operator's shard
	next.Spec.SavepointPath = handover
	w.create(next)

	savepointNow(t, w, "wc", "3") // retention would retire handover
	w.passes("wc", 5)
	require.Less(t, w.clock.Now().Sub(named), snapshots.OtherShardsFreshFor, "the scenario happens within the other shards' read")
	assert.True(t, w.storage.Exists(handover), "an application of shard b names it for its first job (created %s before the disposal)",
		w.clock.Now().Sub(named))
}

// docs/security.md: a spec's savepointPath counts "while it is still to be used (before the first
// job ran, or while a savepointRedeployNonce is not yet done)"; once used, the path left in the
// spec is history. The rule must be the same for the applications of other shards: one whose first
// job ran long ago, its spec still naming the savepoint it started from, must not keep that
// savepoint from retention forever.
func TestAnotherShardsSpecPathCountsOnlyWhileItIsStillToBeUsed(t *testing.T) {
	w := newWorld(t)
	w.shardAs(shardKey + "=a")
	app := wordcount("wc")
	app.Labels = map[string]string{shardKey: "a"}
	retainOne(app)
	w.create(app)
	w.runUntilPhase("wc", v1beta1.PhaseRunning)
	used := savepointNow(t, w, "wc", "1")

	// An application of shard b that started its first job from it long ago and has run since on
	// its own checkpoints; Lyft-style, its manifest still names the savepoint.
	done := wordcount("done")
	done.Labels = map[string]string{shardKey: "b"}
	done.Spec.SavepointPath = used
	done.Status.Deployments.Stable = &v1beta1.DeploymentRecord{JobID: "0123456789abcdef0123456789abcdef", ClusterHash: "0badcafe",
		RestorePath: "file:///checkpoints/checkpoints/0123456789abcdef0123456789abcdef/chk-900"}
	w.create(done)
	w.clock.Step(snapshots.OtherShardsFreshFor)

	savepointNow(t, w, "wc", "2")
	w.passes("wc", 5)
	assert.False(t, w.storage.Exists(used), "nothing needs %s any more: shard b's application ran its first job from it long ago", used)
}
