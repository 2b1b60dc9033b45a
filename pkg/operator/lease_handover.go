package operator

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
)

// waitForUnshardedLeader lets a shard's replica campaign only once no operator renews the Lease
// every operator used before shards had Leases of their own (config.DefaultLeaseName), in the
// same namespace. An operator with limitNamespace, upgraded, moves from that Lease to its shard's:
// during the rolling update the old leader still acts under the old Lease, and the new replica
// would take the new one at once and act beside it. It waits instead until the old leader releases
// the Lease on its way out, or stops renewing it for a lease duration. A Lease renewed longer ago
// than twice its duration is an old leader's that was killed, and is not waited for.
//
// An operator that owns everything uses that Lease itself, and overlaps every shard anyway: a
// shard waiting for it is the safe answer to that mistake, and the log says so.
func waitForUnshardedLeader(ctx context.Context, kube kubernetes.Interface, ns string, le config.LeaderElection, clk clock.Clock) error {
	log := klog.FromContext(ctx)
	var seen string
	var seenAt time.Time
	logged := false
	for {
		lease, err := kube.CoordinationV1().Leases(ns).Get(ctx, config.DefaultLeaseName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading Lease %s/%s, which an operator from before shard leases may hold: %w", ns, config.DefaultLeaseName, err)
		}
		spec := lease.Spec
		if spec.HolderIdentity == nil || *spec.HolderIdentity == "" {
			return nil
		}
		duration := le.LeaseDuration.Duration
		if spec.LeaseDurationSeconds != nil {
			duration = time.Duration(*spec.LeaseDurationSeconds) * time.Second
		}
		now := clk.Now()
		if spec.RenewTime != nil && now.Sub(spec.RenewTime.Time) > 2*duration {
			return nil
		}
		// Like the elector, judged by when this replica saw the record change, not by the holder's clock.
		record := fmt.Sprintf("%s/%v", *spec.HolderIdentity, spec.RenewTime)
		switch {
		case record != seen:
			seen, seenAt = record, now
		case now.Sub(seenAt) >= duration:
			return nil
		}
		if !logged {
			log.Info("waiting for the operator that holds the Lease every operator used before shards to release it or stop "+
				"renewing it, before campaigning for this shard's own Lease: until then it may still act on this shard's applications",
				"lease", ns+"/"+config.DefaultLeaseName, "holder", *spec.HolderIdentity)
			logged = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-clk.After(le.RetryPeriod.Duration):
		}
	}
}
