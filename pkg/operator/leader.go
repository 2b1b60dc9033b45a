package operator

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// runElected runs work while this replica holds the Lease. A replica that loses the lease stops
// acting at once (its passes drain) and returns an error, so that its process exits and restarts
// as a standby: it never acts on a lease it may no longer hold. On a clean stop (ctx ends) the work
// drains first, its passes in flight finishing within the drain timeout, and only then is the
// lease released (ReleaseOnCancel, so the standby need not wait out its duration) and does this
// return: a submission or a savepoint trigger in flight gets its answer and its status write under
// the lease, never after a standby took over.
//
// Before each side effect the work asks acting, which answers an error once the lease was last
// renewed longer ago than the lease duration less maxClockSkew: a leader paused past its lease stops
// acting before it finds out that it lost it.
func runElected(ctx context.Context, kube kubernetes.Interface, le config.LeaderElection, work func(ctx context.Context, acting func() error) error) error {
	ns := leaseNamespace(le)
	host, _ := os.Hostname()
	// The pid tells replicas on one host apart in logs and tests; the uuid, restarts of one pid.
	id := fmt.Sprintf("%s_%d_%s", host, os.Getpid(), uuid.NewString()[:8])
	guard := newLeaseGuard(&resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: le.LeaseName, Namespace: ns},
		Client:     kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}, clock.RealClock{}, le.LeaseDuration.Duration, maxClockSkew(le))
	log := klog.FromContext(ctx)
	// The elector runs on a context of its own: cancelled when the work has drained (a clean stop),
	// or at once while this replica does not lead. The elector cancels the context it hands the
	// work when the lease is lost.
	electing, stopElecting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElecting()
	var (
		mu       sync.Mutex
		started  bool
		workErr  error
		workDone = make(chan struct{})
	)
	go func() {
		<-ctx.Done()
		mu.Lock()
		leading := started
		mu.Unlock()
		if leading {
			<-workDone
		}
		stopElecting()
	}()
	lost := false
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: guard, ReleaseOnCancel: true, Name: "flinkfsm",
		LeaseDuration: le.LeaseDuration.Duration, RenewDeadline: le.RenewDeadline.Duration, RetryPeriod: le.RetryPeriod.Duration,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leadCtx context.Context) {
				mu.Lock()
				if ctx.Err() != nil {
					mu.Unlock()
					close(workDone)
					return
				}
				started = true
				mu.Unlock()
				defer close(workDone)
				log.Info("leading: acting on applications", "identity", id, "lease", ns+"/"+le.LeaseName)
				// The work stops when the process is asked to (ctx) or the lease is lost (leadCtx).
				workCtx, stop := context.WithCancel(leadCtx)
				defer stop()
				go func() {
					select {
					case <-ctx.Done():
					case <-workCtx.Done():
					}
					stop()
				}()
				workErr = work(workCtx, guard.Acting)
			},
			OnStoppedLeading: func() { lost = true },
			OnNewLeader: func(identity string) {
				if identity != id {
					log.Info("standing by", "leader", identity)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	elector.Run(electing)
	mu.Lock()
	leading := started
	mu.Unlock()
	if leading {
		// A lost lease ends the elector before the work has drained: wait for it.
		<-workDone
	}
	switch {
	case workErr != nil:
		return workErr
	case lost && ctx.Err() == nil:
		return fmt.Errorf("lost the leader lease %s/%s; exiting to stand by again", ns, le.LeaseName)
	}
	return nil
}

// leaseNamespace is where the Lease lives: leaseNamespace, else the operator pod's, else
// flinkfsm-system.
func leaseNamespace(le config.LeaderElection) string {
	if ns := le.LeaseNamespace; ns != "" {
		return ns
	}
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "flinkfsm-system"
}

// maxClockSkew is how far apart the replicas' clocks may be: a standby counts the lease duration from
// when it saw the renewal, so the leader stops acting this much before the lease could have run out.
// One retry period, at least a second.
func maxClockSkew(le config.LeaderElection) time.Duration {
	return max(le.RetryPeriod.Duration, time.Second)
}
