package operator

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	testclock "k8s.io/utils/clock/testing"
)

// A leader frozen past its lease stops acting before it finds out that it lost the lease: the guard
// answers an error once the last renewal is older than the lease duration less the allowed skew,
// and acting again needs a renewal that succeeded (issue 25 item 10).
func TestAFrozenLeaderStopsActingBeforeItsLeaseRunsOut(t *testing.T) {
	clk := testclock.NewFakeClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	kube := fake.NewClientset()
	lock := &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Name: "flinkfsm", Namespace: "ops"},
		Client: kube.CoordinationV1(), LockConfig: resourcelock.ResourceLockConfig{Identity: "me"}}
	g := newLeaseGuard(lock, clk, 15*time.Second, 2*time.Second)
	require.Error(t, g.Acting(), "not before the lease was acquired")

	ctx := context.Background()
	record := resourcelock.LeaderElectionRecord{HolderIdentity: "me", LeaseDurationSeconds: 15,
		AcquireTime: metav1.NewTime(clk.Now()), RenewTime: metav1.NewTime(clk.Now())}
	require.NoError(t, g.Create(ctx, record))
	assert.NoError(t, g.Acting())

	clk.Step(12 * time.Second) // renewals keep coming every retry period while it runs
	require.NoError(t, g.Update(ctx, record))
	clk.Step(12 * time.Second)
	assert.NoError(t, g.Acting(), "12 s after a renewal, within 15 s less 2 s of skew")

	clk.Step(2 * time.Second) // frozen: no renewal for 14 s
	err := g.Acting()
	require.Error(t, err, "a standby may hold the lease by now")
	assert.Contains(t, err.Error(), "last renewed 14s ago")

	// A renewal that fails does not count.
	require.NoError(t, kube.CoordinationV1().Leases("ops").Delete(ctx, "flinkfsm", metav1.DeleteOptions{}))
	assert.Error(t, g.Update(ctx, record))
	assert.Error(t, g.Acting())
}
