package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
)

// soakOptions shape the soak, (e).
type soakOptions struct {
	// n is the ordinary applications of each run.
	n int
	// pairs is how many baseline and soak runs alternate; the pair with the median ratio is kept.
	pairs int
	// headStart is how long the hostile tenants run before the ordinary applications are created:
	// their clusters are up, their JobManagers polled and their jars being fetched by then.
	headStart time.Duration
	// hold is how long the last soak run goes on after every ordinary application runs.
	hold time.Duration
	// largeJar is the size of the large jar.
	largeJar int64
	// tenants names the hostile tenants to run: empty for all thirteen, "none" for none (the two runs
	// are then alike, and their ratio is the machine's noise).
	tenants string
}

// soakNamespace holds the ordinary applications of every run of the soak, one run at a time.
const soakNamespace = "soak-ordinary"

// soakRun is one pair of runs: the ordinary applications alone, then beside the hostile tenants.
type soakRun struct {
	baseline, soak *scaleResult
	// baselineCalls and soakCalls are the operator's Flink calls while each run's applications
	// started.
	baselineCalls, soakCalls flinkCalls
	baselinePeakMiB          float64
	soakPeakMiB              float64
	notRunningAtEnd          int
	tenantsRemaining         []string
}

// soak is (e), issue 25's soak: n ordinary applications created at once, alone (the baseline) and
// then beside thirteen hostile tenants created a head start earlier, in the same environment with the
// same settings. Each run's all-Running time is its own ordinary applications' only: none waits on
// a hostile tenant. The operator is watched throughout for its peak memory and for ending on its
// own; it is started again when it does, and the soak goes on.
func (b *bench) soak(ctx context.Context, o soakOptions) (*soakResult, error) {
	tenants, err := selectTenants(hostileTenants(), o.tenants)
	if err != nil {
		return nil, err
	}
	jars, err := startJarHosts(o.largeJar)
	if err != nil {
		return nil, err
	}
	defer jars.stop()
	watch := b.watchOperator(ctx)
	defer watch.close()

	var runs []soakRun
	for i := range o.pairs {
		last := i == o.pairs-1
		run, err := b.soakPair(ctx, o, tenants, jars, watch, last)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
		b.logf("(e) pair %d of %d: beside hostile tenants %.2fs / alone %.2fs = %.2f×; operator peak RSS %.0f MiB (alone %.0f)",
			i+1, o.pairs, run.soak.OperatorSeconds, run.baseline.OperatorSeconds,
			run.soak.OperatorSeconds/run.baseline.OperatorSeconds, run.soakPeakMiB, run.baselinePeakMiB)
	}
	res := summarizeSoak(runs)
	res.N, res.HostileTenants, res.Pairs = o.n, len(tenants), soakPairsOf(runs)
	res.HeadStartSeconds, res.HoldSeconds, res.LargeJarMiB = o.headStart.Seconds(), o.hold.Seconds(), o.largeJar>>20
	_, res.PeakRSSSource = watch.peak()
	res.Exits = watch.exited()
	res.Restarts = len(res.Exits)
	for _, t := range tenants {
		res.Tenants = append(res.Tenants, b.tenantOutcome(ctx, t, jars))
	}
	return res, nil
}

// selectTenants picks the tenants a comma-separated list names: all of them for "", none for
// "none".
func selectTenants(all []tenant, names string) ([]tenant, error) {
	switch names {
	case "":
		return all, nil
	case "none":
		return nil, nil
	}
	byName := map[string]tenant{}
	for _, t := range all {
		byName[t.name] = t
	}
	var out []tenant
	for _, name := range strings.Split(names, ",") {
		t, ok := byName[strings.TrimSpace(name)]
		if !ok {
			known := make([]string, len(all))
			for i, t := range all {
				known[i] = t.name
			}
			return nil, fmt.Errorf("no hostile tenant %q; there are %s", name, strings.Join(known, ", "))
		}
		out = append(out, t)
	}
	return out, nil
}

// soakPair runs the baseline and then the soak. Unless it is the last pair, it removes the
// ordinary applications and the tenants afterwards, so that the next baseline runs alone.
func (b *bench) soakPair(ctx context.Context, o soakOptions, tenants []tenant, jars *jarHosts, watch *operatorWatch, last bool) (soakRun, error) {
	var run soakRun
	b.logf("(e) baseline: %d ordinary applications, no hostile tenant", o.n)
	watch.resetPeak()
	calls := b.countFlinkCalls(ctx)
	base, keys, err := b.fleet(ctx, soakNamespace, o.n)
	if err != nil {
		return run, fmt.Errorf("(e) baseline: %w", err)
	}
	run.baseline, run.baselineCalls = base, calls()
	run.baselinePeakMiB, _ = watch.peak()
	if err := b.deleteFleet(ctx, keys); err != nil {
		return run, err
	}

	watch.resetPeak()
	b.logf("(e) soak: %d hostile tenants, %s ahead of %d ordinary applications", len(tenants), o.headStart, o.n)
	for _, t := range tenants {
		if err := b.createTenant(ctx, t, jars); err != nil {
			return run, fmt.Errorf("(e) hostile tenant %s: %w", t.name, err)
		}
	}
	if err := sleep(ctx, o.headStart); err != nil {
		return run, err
	}
	calls = b.countFlinkCalls(ctx)
	soaked, keys, err := b.fleet(ctx, soakNamespace, o.n)
	if err != nil {
		return run, fmt.Errorf("(e) beside the hostile tenants: %w", err)
	}
	run.soak, run.soakCalls = soaked, calls()
	if last {
		b.logf("(e) holding for %s beside the hostile tenants", o.hold)
		if err := sleep(ctx, o.hold); err != nil {
			return run, err
		}
	}
	for _, k := range keys {
		if !isRunning(b.rec.latest(k), "") {
			run.notRunningAtEnd++
		}
	}
	run.soakPeakMiB, _ = watch.peak()
	if last {
		return run, nil
	}
	if err := b.deleteFleet(ctx, keys); err != nil {
		return run, err
	}
	run.tenantsRemaining, err = b.removeTenants(ctx, tenants)
	return run, err
}

// countFlinkCalls starts counting the operator's Flink calls; the function it returns says what
// they were since. A scrape that fails (an operator that ended and was started again) counts none:
// the figures are a diagnosis, not a measurement the soak stands on.
func (b *bench) countFlinkCalls(ctx context.Context) func() flinkCalls {
	before, err := b.flinkCallTotals(ctx)
	return func() flinkCalls {
		after, err2 := b.flinkCallTotals(ctx)
		if err != nil || err2 != nil {
			return flinkCalls{}
		}
		return after.since(before)
	}
}

// tenantGrace is how long the hostile tenants' namespaces may take to go once their JobManagers
// answer normally again; after it their objects' finalizers are removed by hand.
const tenantGrace = 2 * time.Minute

// removeTenants deletes the hostile tenants between pairs. Their JobManagers answer normally
// first, so that the operator can cancel their jobs as it deletes them. It returns the tenants
// whose namespaces did not go within tenantGrace: the operator did not finish deleting their
// objects, and the bench removed their finalizers itself.
func (b *bench) removeTenants(ctx context.Context, tenants []tenant) ([]string, error) {
	for _, t := range tenants {
		b.env.Fleet.SetFaults(t.namespace(), tenantApp, flinksim.Faults{})
		if err := b.kube.CoreV1().Namespaces().Delete(ctx, t.namespace(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	gone := func(t tenant) bool {
		_, err := b.kube.CoreV1().Namespaces().Get(ctx, t.namespace(), metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}
	wctx, cancel := context.WithTimeout(ctx, tenantGrace)
	defer cancel()
	_ = waitFor(wctx, "the hostile tenants' namespaces deleted", func() bool {
		for _, t := range tenants {
			if !gone(t) {
				return false
			}
		}
		return true
	})
	var stuck []string
	for _, t := range tenants {
		if !gone(t) {
			stuck = append(stuck, t.name)
			b.logf("(e) hostile tenant %s still there %s after its deletion; removing its finalizers", t.name, tenantGrace)
			b.dropFinalizers(ctx, t.namespace())
		}
	}
	for _, t := range tenants {
		wctx, cancel := context.WithTimeout(ctx, b.timeout)
		err := waitFor(wctx, "namespace "+t.namespace()+" deleted", func() bool { return gone(t) })
		cancel()
		if err != nil {
			return stuck, err
		}
	}
	return stuck, nil
}

// dropFinalizers removes the finalizers of every flinkfsm object in a namespace.
func (b *bench) dropFinalizers(ctx context.Context, ns string) {
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	v1 := b.apps.FlinkV1beta1()
	if list, err := v1.FlinkApplications(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, o := range list.Items {
			_, _ = v1.FlinkApplications(ns).Patch(ctx, o.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		}
	}
	if list, err := v1.FlinkSessionJobs(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, o := range list.Items {
			_, _ = v1.FlinkSessionJobs(ns).Patch(ctx, o.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		}
	}
	if list, err := v1.FlinkSessionClusters(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, o := range list.Items {
			_, _ = v1.FlinkSessionClusters(ns).Patch(ctx, o.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		}
	}
}
