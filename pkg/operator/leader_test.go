package operator

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flyteorg/flytestdlib/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	flinkconfig "github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// A leader told to stop drains its passes while it still holds the lease, and only then releases
// it and returns: a submission or a savepoint trigger in flight is never finished after a standby
// took over (issue 25 item 6: the lease was released and the process gone while passes ran).
func TestALeaderDrainsItsPassesBeforeItReleasesTheLease(t *testing.T) {
	kube := fake.NewClientset()
	le := flinkconfig.LeaderElection{Enabled: true, LeaseName: "flinkfsm", LeaseNamespace: "ops",
		LeaseDuration: config.Duration{Duration: 3 * time.Second}, RenewDeadline: config.Duration{Duration: 2 * time.Second},
		RetryPeriod: config.Duration{Duration: 200 * time.Millisecond}}
	ctx, stop := context.WithCancel(context.Background())
	leading := make(chan struct{})
	var drained, heldWhileDraining atomic.Bool
	done := make(chan error)
	go func() {
		done <- runElected(ctx, kube, le, func(work context.Context, _ func() error) error {
			close(leading)
			<-work.Done()
			// A pass in flight finishes: its answer and its status write come after the stop.
			time.Sleep(500 * time.Millisecond)
			lease, err := kube.CoordinationV1().Leases("ops").Get(context.Background(), "flinkfsm", metav1.GetOptions{})
			heldWhileDraining.Store(err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "")
			drained.Store(true)
			return nil
		})
	}()
	select {
	case <-leading:
	case <-time.After(10 * time.Second):
		t.Fatal("never led")
	}
	stop()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("never returned")
	}
	assert.True(t, drained.Load(), "runElected returned before the work drained")
	assert.True(t, heldWhileDraining.Load(), "the lease was released while passes were in flight")
	lease, err := kube.CoordinationV1().Leases("ops").Get(context.Background(), "flinkfsm", metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "", "the lease is released once drained")
}
