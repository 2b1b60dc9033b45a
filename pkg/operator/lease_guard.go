package operator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
)

// leaseGuard is the leader's lease lock that remembers when the lease was last renewed, so that a
// leader can tell before each side effect whether it still holds the lease with margin. The elector
// only finds out that it lost the lease when its next renewal fails; a leader paused longer than the
// lease (a GC pause, CPU starvation) acts on in the meantime, beside the standby that took over.
// Its Kubernetes writes are guarded by resourceVersions, but its calls to Flink are not.
type leaseGuard struct {
	resourcelock.Interface
	clock clock.PassiveClock
	// safeFor is how long after a renewal was sent this replica may act: the lease duration less the
	// clock skew allowed between the replicas' clocks.
	safeFor time.Duration

	mu      sync.Mutex
	renewed time.Time
}

func newLeaseGuard(lock resourcelock.Interface, clk clock.PassiveClock, leaseDuration, skew time.Duration) *leaseGuard {
	return &leaseGuard{Interface: lock, clock: clk, safeFor: leaseDuration - skew}
}

// Create and Update are the acquisition and the renewals: the time counts from when the request
// was sent, since the lease runs from the renew time the request carries.
func (g *leaseGuard) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	return g.renew(func() error { return g.Interface.Create(ctx, ler) })
}

func (g *leaseGuard) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	return g.renew(func() error { return g.Interface.Update(ctx, ler) })
}

func (g *leaseGuard) renew(send func() error) error {
	sent := g.clock.Now()
	if err := send(); err != nil {
		return err
	}
	g.mu.Lock()
	if sent.After(g.renewed) {
		g.renewed = sent
	}
	g.mu.Unlock()
	return nil
}

// Acting is nil while the lease was renewed recently enough that no other replica can hold it.
func (g *leaseGuard) Acting() error {
	g.mu.Lock()
	renewed := g.renewed
	g.mu.Unlock()
	if renewed.IsZero() {
		return fmt.Errorf("the leader lease was never acquired")
	}
	if since := g.clock.Since(renewed); since >= g.safeFor {
		return fmt.Errorf("the leader lease was last renewed %s ago, and another replica may hold it after %s; not acting",
			since.Round(time.Millisecond), g.safeFor)
	}
	return nil
}
