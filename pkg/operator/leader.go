package operator

import (
	"context"
	"fmt"
	"os"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// runElected runs work while this replica holds the Lease. A replica that loses the lease stops
// acting at once (its passes drain) and returns an error, so that its process exits and restarts
// as a standby: it never acts on a lease it may no longer hold. ReleaseOnCancel hands the lease over
// at once on a clean stop instead of making the standby wait out its duration.
func runElected(ctx context.Context, kube kubernetes.Interface, le config.LeaderElection, work func(context.Context) error) error {
	ns := le.LeaseNamespace
	if ns == "" {
		ns = os.Getenv("POD_NAMESPACE")
	}
	if ns == "" {
		ns = "flinkfsm-system"
	}
	host, _ := os.Hostname()
	// The pid tells replicas on one host apart in logs and tests; the uuid, restarts of one pid.
	id := fmt.Sprintf("%s_%d_%s", host, os.Getpid(), uuid.NewString()[:8])
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: le.LeaseName, Namespace: ns},
		Client:     kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	log := klog.FromContext(ctx)
	var workErr error
	lost := false
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, ReleaseOnCancel: true, Name: "flinkfsm",
		LeaseDuration: le.LeaseDuration.Duration, RenewDeadline: le.RenewDeadline.Duration, RetryPeriod: le.RetryPeriod.Duration,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				log.Info("leading: acting on applications", "identity", id, "lease", ns+"/"+le.LeaseName)
				workErr = work(ctx)
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
	elector.Run(ctx)
	switch {
	case workErr != nil:
		return workErr
	case lost && ctx.Err() == nil:
		return fmt.Errorf("lost the leader lease %s/%s; exiting to stand by again", ns, le.LeaseName)
	}
	return nil
}
