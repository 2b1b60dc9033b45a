package operator

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flyteorg/flytestdlib/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	flinkconfig "github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

func heldLease(holder string, renewed time.Time, seconds int32) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: flinkconfig.DefaultLeaseName, Namespace: "ops"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(seconds),
			RenewTime: &metav1.MicroTime{Time: renewed}}}
}

var handoverElection = flinkconfig.LeaderElection{LeaseDuration: config.Duration{Duration: time.Second},
	RetryPeriod: config.Duration{Duration: 20 * time.Millisecond}}

// A shard's replica upgraded from an operator that used flinkfsm-leader waits while the old
// leader still renews it, and campaigns once it is released: never two leaders during the rollout.
func TestAShardWaitsForTheLeaderOfTheLeaseBeforeShards(t *testing.T) {
	// A lease of 3 s, so that a loaded machine delaying a renewal does not end the wait early.
	kube := fake.NewClientset(heldLease("old-replica", time.Now(), 3))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The old leader renews every 100 ms, then releases the Lease on its way out.
	var releasing atomic.Bool
	go func() {
		for i := 0; i < 15; i++ {
			time.Sleep(100 * time.Millisecond)
			_, _ = kube.CoordinationV1().Leases("ops").Update(ctx, heldLease("old-replica", time.Now(), 3), metav1.UpdateOptions{})
		}
		releasing.Store(true)
		_, _ = kube.CoordinationV1().Leases("ops").Update(ctx, heldLease("", time.Now(), 3), metav1.UpdateOptions{})
	}()
	require.NoError(t, waitForUnshardedLeader(ctx, kube, "ops", handoverElection, clock.RealClock{}))
	assert.True(t, releasing.Load(), "campaigned while the old leader still renewed its Lease")
}

// Nothing to wait for: no such Lease, a released one, one abandoned long ago, or one that stops
// being renewed (its holder was killed) after a lease duration.
func TestAShardDoesNotWaitForALeaseNobodyHolds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for name, kube := range map[string]*fake.Clientset{
		"none":      fake.NewClientset(),
		"released":  fake.NewClientset(heldLease("", time.Now(), 1)),
		"abandoned": fake.NewClientset(heldLease("killed", time.Now().Add(-time.Hour), 1)),
	} {
		began := time.Now()
		require.NoError(t, waitForUnshardedLeader(ctx, kube, "ops", handoverElection, clock.RealClock{}), name)
		assert.Less(t, time.Since(began), 500*time.Millisecond, name)
	}
	began := time.Now()
	require.NoError(t, waitForUnshardedLeader(ctx, fake.NewClientset(heldLease("killed", time.Now(), 1)), "ops", handoverElection, clock.RealClock{}))
	assert.GreaterOrEqual(t, time.Since(began), time.Second, "a Lease renewed just now is waited out for its duration")
}
