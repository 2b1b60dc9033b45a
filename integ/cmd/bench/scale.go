package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

type scaleResult struct {
	N int `json:"n"`
	// FloorSeconds is how long the same Deployments and Services take to become available when
	// applied straight to the API server, without the operator: what Kubernetes alone costs.
	FloorSeconds float64 `json:"floorSeconds"`
	// OperatorSeconds is from the first FlinkApplication create to the last application Running.
	OperatorSeconds float64 `json:"operatorSeconds"`
	Ratio           float64 `json:"ratio"`
	// RatioWithoutStabilization is the ratio with jobStabilizationPeriod left out of the operator's
	// time, which the target judges (issue 29), as the update target does.
	RatioWithoutStabilization float64 `json:"ratioWithoutStabilization"`
	// FirstRunningSeconds and MedianRunningSeconds show whether applications moved in lockstep.
	FirstRunningSeconds  float64 `json:"firstRunningSeconds"`
	MedianRunningSeconds float64 `json:"medianRunningSeconds"`
	// AppliedSeconds is how long issuing the creates took, for both runs.
	FloorAppliedSeconds    float64 `json:"floorAppliedSeconds"`
	OperatorAppliedSeconds float64 `json:"operatorAppliedSeconds"`
	Memory                 memory  `json:"memory"`
	// FloorRequests and OperatorRequests are the API server's requests per application during
	// each run, everyone's (see apiRequests), by verb and resource.
	FloorRequests    map[string]float64 `json:"floorRequestsPerApp"`
	OperatorRequests map[string]float64 `json:"operatorRequestsPerApp"`
	// FloorCPU and OperatorCPU are the CPU seconds each process of the machine spent in each run.
	FloorCPU    map[string]float64 `json:"floorCPUSeconds"`
	OperatorCPU map[string]float64 `json:"operatorCPUSeconds"`
	// OperatorKubeRequests is how the operator's own requests fared in its run, by "VERB resource":
	// whether the API server or the client's rate limit kept them waiting.
	OperatorKubeRequests map[string]requestTimes `json:"operatorKubeRequests"`
	// FloorProcesses and OperatorProcesses are the environment's own processes at the end of each
	// run, with the CPU each spent in it.
	FloorProcesses    environmentFigures `json:"floorProcesses"`
	OperatorProcesses environmentFigures `json:"operatorProcesses"`
	// PhaseEntered is, per phase, when the applications entered it (seconds since the first
	// create): the median and the last.
	PhaseEntered map[string]spread `json:"phaseEntered"`
	// Pairs are every floor and operator run of (b), in the order they ran; the figures above are
	// the pair with the median ratio.
	Pairs []pair `json:"pairs"`
	// FloorFrom is set when the floor was not measured but taken from an earlier run's results
	// (-floor-from): every floor figure above, and the pair's, is that run's.
	FloorFrom *floorSource `json:"floorFrom,omitempty"`
	// NoFloor is set when no floor was measured nor taken (-no-floor): every floor figure and ratio
	// above is zero, and the all-Running target is not judged.
	NoFloor bool `json:"noFloor,omitempty"`
}

type spread struct {
	Median float64 `json:"median"`
	Last   float64 `json:"last"`
}

// appName is the i-th application of a fleet; the floor uses the same names in its own namespace.
func appName(i int) string { return fmt.Sprintf("app-%04d", i) }

// floor applies, for n applications, the objects the operator would create for them — both
// Deployments and both Services, rendered by the operator's own code — and waits until every
// Deployment is available. It tells keepFloor what it measured, then deletes them so that the
// operator's run starts on an empty cluster.
func (b *bench) floor(ctx context.Context, n int) (run floorRun, err error) {
	nss, err := b.fleetNamespaces(ctx, "bench-floor", n)
	if err != nil {
		return run, err
	}
	var objects []func(context.Context) error
	for i := range n {
		ns := b.fleetNamespace("bench-floor", i)
		// A dry run returns the application as the API server would store it, CRD defaults
		// included, without creating it: no operator sees it.
		app, err := b.apps.FlinkV1beta1().FlinkApplications(ns).Create(ctx, benchApp(ns, appName(i), 3, b.checkpointEvery(i)),
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return run, fmt.Errorf("dry-run of %s: %w", appName(i), err)
		}
		objects = append(objects, b.renderedObjects(app)...)
	}
	avail := newAvailability(2 * n)
	stop, err := avail.watch(ctx, b, nss)
	if err != nil {
		return run, err
	}
	defer stop()

	before, err := b.apiRequests(ctx)
	if err != nil {
		return run, err
	}
	cpuBefore, envBefore := cpuByProcess(), b.sampleEnvironment()
	began := time.Now()
	if err := parallel(ctx, len(objects), func(ctx context.Context, i int) error { return createRetrying(ctx, objects[i]) }); err != nil {
		return run, err
	}
	run.applied = time.Since(began).Seconds()
	wctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	if err := waitFor(wctx, "the floor's Deployments available", avail.done); err != nil {
		return run, fmt.Errorf("%w (%d of %d available)", err, avail.count(), 2*n)
	}
	run.seconds = avail.last().Sub(began).Seconds()
	run.cpu = cpuSpent(cpuBefore, cpuByProcess())
	run.processes = b.sampleEnvironment().since(envBefore).over(time.Since(began))
	after, err := b.apiRequests(ctx)
	if err != nil {
		return run, err
	}
	run.requests = requestsPerApp(before, after, n)
	b.logf("(b) floor: %d applications' Deployments available in %.2fs; %.1f API requests per app", n, run.seconds, totalRequests(run.requests))
	b.logf("(b) floor: the environment: %s", run.processes)
	// Kept before the deletion, which took half an hour at 10,000: a run stopped during it can go on
	// with -floor-from in a fresh environment, which starts in a minute.
	if b.keepFloor != nil {
		b.keepFloor(n, run)
	}
	return run, b.deleteNamespaces(ctx, nss)
}

// floorRun is what the floor measured.
type floorRun struct {
	seconds, applied float64
	requests, cpu    map[string]float64
	processes        environmentFigures
}

// renderedObjects are the creates of one application's cluster, as the operator renders them,
// without the owner reference to an application that does not exist (the garbage collector would
// delete them at once).
func (b *bench) renderedObjects(app *v1beta1.FlinkApplication) []func(context.Context) error {
	hash := flink.ClusterHash(app)
	owner := flink.OwnerFromApplication(app)
	// As the operator renders a checkpointing job's cluster: checkpoints kept for its record
	// window (checkpointRecordInterval, the bench's statusPollInterval of 10 s, the checkpoint
	// book's wait).
	owner.KeepCheckpointsFor = config.Default().CheckpointRecordInterval.Duration + 10*time.Second + config.Default().CheckpointBookInterval.Duration
	cluster, err := owner.RenderCluster(hash, "")
	if err != nil {
		return []func(context.Context) error{func(context.Context) error { return err }}
	}
	generic := owner.RenderGenericService(hash)
	for _, m := range []*metav1.ObjectMeta{&cluster.JobManager.ObjectMeta, &cluster.TaskManager.ObjectMeta,
		&cluster.Service.ObjectMeta, &generic.ObjectMeta} {
		m.OwnerReferences = nil
	}
	deployments := b.kube.AppsV1().Deployments(app.Namespace)
	services := b.kube.CoreV1().Services(app.Namespace)
	opts := metav1.CreateOptions{}
	return []func(context.Context) error{
		func(ctx context.Context) error {
			_, err := deployments.Create(ctx, cluster.JobManager, opts)
			return err
		},
		func(ctx context.Context) error {
			_, err := deployments.Create(ctx, cluster.TaskManager, opts)
			return err
		},
		func(ctx context.Context) error { _, err := services.Create(ctx, cluster.Service, opts); return err },
		func(ctx context.Context) error { _, err := services.Create(ctx, generic, opts); return err },
	}
}

// fleet creates n FlinkApplications at once in a new namespace and waits until all run.
func (b *bench) fleet(ctx context.Context, namespace string, n int) (*scaleResult, []string, error) {
	nss, err := b.fleetNamespaces(ctx, namespace, n)
	if err != nil {
		return nil, nil, err
	}
	keys := make([]string, n)
	for i := range n {
		keys[i] = b.fleetNamespace(namespace, i) + "/" + appName(i)
	}
	res := &scaleResult{N: n}
	before, err := b.apiRequests(ctx)
	if err != nil {
		return nil, nil, err
	}
	kubeBefore, err := b.kubeRequestTotals(ctx)
	if err != nil {
		return nil, nil, err
	}
	// The same watch as the floor's, so that both runs carry it, and so that the time Kubernetes
	// took to make the clusters available shows apart from the operator's own.
	avail := newAvailability(2 * n)
	stop, err := avail.watch(ctx, b, nss)
	if err != nil {
		return nil, nil, err
	}
	defer stop()
	cpuBefore, envBefore := cpuByProcess(), b.sampleEnvironment()
	began := time.Now()
	err = parallel(ctx, n, func(ctx context.Context, i int) error {
		ns := b.fleetNamespace(namespace, i)
		app := benchApp(ns, appName(i), 3, b.checkpointEvery(i))
		return createRetrying(ctx, func(ctx context.Context) error {
			_, err := b.apps.FlinkV1beta1().FlinkApplications(ns).Create(ctx, app, metav1.CreateOptions{})
			return err
		})
	})
	if err != nil {
		return nil, nil, err
	}
	res.OperatorAppliedSeconds = time.Since(began).Seconds()
	wctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	var times []float64
	err = waitFor(wctx, "every application Running", func() bool {
		times = times[:0]
		for _, k := range keys {
			at, ok := b.rec.runningSince(k, began, "")
			if !ok {
				return false
			}
			times = append(times, at.Sub(began).Seconds())
		}
		return true
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%w (%s)", err, b.phaseCounts(keys))
	}
	sort.Float64s(times)
	res.FirstRunningSeconds, res.OperatorSeconds = times[0], times[len(times)-1]
	res.MedianRunningSeconds = median(times)
	res.OperatorCPU = cpuSpent(cpuBefore, cpuByProcess())
	res.OperatorProcesses = b.sampleEnvironment().since(envBefore).over(time.Since(began))
	after, err := b.apiRequests(ctx)
	if err != nil {
		return nil, nil, err
	}
	res.OperatorRequests = requestsPerApp(before, after, n)
	kubeAfter, err := b.kubeRequestTotals(ctx)
	if err != nil {
		return nil, nil, err
	}
	res.OperatorKubeRequests = kubeAfter.since(kubeBefore)
	res.Memory = b.memory(ctx)
	res.PhaseEntered = map[string]spread{}
	for phase, at := range b.rec.phaseEntries(keys, began) {
		sort.Float64s(at)
		res.PhaseEntered[phase] = spread{Median: median(at), Last: at[len(at)-1]}
	}
	if at := avail.since(began); len(at) > 0 {
		res.PhaseEntered[deploymentsAvailable] = spread{Median: median(at), Last: at[len(at)-1]}
	}
	b.logf("operator: %d applications of %s Running in %.2fs (first %.2fs, median %.2fs); RSS %.0f MiB",
		n, strings.Join(nss, ", "), res.OperatorSeconds, res.FirstRunningSeconds, res.MedianRunningSeconds, res.Memory.RSSMiB)
	b.logf("operator: the environment: %s", res.OperatorProcesses)
	return res, keys, nil
}

// checkpointingApps creates k applications that checkpoint every 10 s, with state.checkpoints.
// num-retained as retained says (0: none set), and waits until they run. They show in (c) what
// checkpoint progress costs: the operator records a checkpoint before Flink may delete the recorded
// one; with one retained that is at every checkpoint, with none set once per
// checkpointRecordInterval, as the operator's cluster keeps enough.
func (b *bench) checkpointingApps(ctx context.Context, k, retained int) (*group, error) {
	ns, err := b.namespace(ctx, "bench-checkpointing")
	if err != nil {
		return nil, err
	}
	g := &group{}
	began := time.Now()
	err = parallel(ctx, k, func(ctx context.Context, i int) error {
		app := benchApp(ns, appName(i), 3, "10s")
		if retained > 0 {
			app.Spec.FlinkConfig["state.checkpoints.num-retained"] = strconv.Itoa(retained)
		}
		_, err := b.apps.FlinkV1beta1().FlinkApplications(ns).Create(ctx, app, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, err
	}
	for i := range k {
		g.keys = append(g.keys, ns+"/"+appName(i))
	}
	wctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	err = waitFor(wctx, "the checkpointing applications Running", func() bool {
		for _, key := range g.keys {
			if _, ok := b.rec.runningSince(key, began, ""); !ok {
				return false
			}
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, b.phaseCounts(g.keys))
	}
	return g, nil
}

// phaseCounts says where the applications are, for a timeout's message.
func (b *bench) phaseCounts(keys []string) string {
	counts := map[string]int{}
	for _, k := range keys {
		phase := "absent"
		if app := b.rec.latest(k); app != nil {
			phase = string(app.Status.Phase)
			if phase == "" {
				phase = "no status"
			}
		}
		counts[phase]++
	}
	return fmt.Sprint(counts)
}

// availability records when each Deployment of some namespaces first became available.
type availability struct {
	want int
	mu   sync.Mutex
	at   map[string]time.Time // by "<namespace>/<name>"
}

func newAvailability(want int) *availability {
	return &availability{want: want, at: map[string]time.Time{}}
}

func (a *availability) watch(ctx context.Context, b *bench, nss []string) (stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	var options []informers.SharedInformerOption
	if len(nss) == 1 {
		options = append(options, informers.WithNamespace(nss[0]))
	}
	ours := map[string]bool{}
	for _, ns := range nss {
		ours[ns] = true
	}
	factory := informers.NewSharedInformerFactoryWithOptions(b.kube, 0, options...)
	informer := factory.Apps().V1().Deployments().Informer()
	seen := func(obj any) {
		d, ok := obj.(*appsv1.Deployment)
		if !ok || !ours[d.Namespace] || !deploymentAvailable(d) {
			return
		}
		now := time.Now()
		key := d.Namespace + "/" + d.Name
		a.mu.Lock()
		defer a.mu.Unlock()
		if _, done := a.at[key]; !done {
			a.at[key] = now
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) },
	}); err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		cancel()
		return nil, fmt.Errorf("deployment informer did not sync")
	}
	return func() { cancel(); factory.Shutdown() }, nil
}

func deploymentAvailable(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.ReadyReplicas == want &&
		s.AvailableReplicas == want
}

func (a *availability) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.at)
}

// deploymentsAvailable is the row of PhaseEntered that says when the Deployments became available.
const deploymentsAvailable = "(Deployments available)"

// since is when each Deployment became available, in seconds since began, sorted.
func (a *availability) since(began time.Time) []float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]float64, 0, len(a.at))
	for _, t := range a.at {
		out = append(out, t.Sub(began).Seconds())
	}
	sort.Float64s(out)
	return out
}

func (a *availability) done() bool { return a.count() >= a.want }

func (a *availability) last() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	var last time.Time
	for _, t := range a.at {
		if t.After(last) {
			last = t
		}
	}
	return last
}

// parallel runs do(0..n-1) on 32 goroutines and returns the first error: objects are applied "at
// once", limited by the API server rather than by the benchmark.
func parallel(ctx context.Context, n int, do func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(ctx, i); err != nil {
					select {
					case errs <- err:
					default:
					}
					cancel()
				}
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

// fleetNamespace is the namespace of the i-th application of a fleet (or floor) whose first
// namespace is base: base for the first perNamespace applications, then base-1, base-2, ... As
// many applications in one namespace as at 2,000 make Kubernetes' controllers quadratic: the
// ReplicaSet controller lists the namespace's pods at each sync, the endpoints controllers at
// each Service's, and the floor at 2,000 took 4.7 times the controller manager's CPU of 1,000.
func (b *bench) fleetNamespace(base string, i int) string {
	if k := i / max(1, b.perNamespace); k > 0 {
		return fmt.Sprintf("%s-%d", base, k)
	}
	return base
}

// fleetNamespaces creates the namespaces of a fleet of n applications (see fleetNamespace).
func (b *bench) fleetNamespaces(ctx context.Context, base string, n int) ([]string, error) {
	var nss []string
	for i := 0; i < max(n, 1); i += max(1, b.perNamespace) {
		ns, err := b.namespace(ctx, b.fleetNamespace(base, i))
		if err != nil {
			return nil, err
		}
		nss = append(nss, ns)
	}
	return nss, nil
}

// namespace creates a namespace for one measurement.
func (b *bench) namespace(ctx context.Context, name string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := b.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	return name, nil
}

// deleteNamespaces deletes namespaces, all at once, and waits until they are gone, with
// everything in them.
func (b *bench) deleteNamespaces(ctx context.Context, nss []string) error {
	began := time.Now()
	for _, ns := range nss {
		if err := b.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	err := waitFor(ctx, "namespaces "+strings.Join(nss, ", ")+" deleted", func() bool {
		for _, ns := range nss {
			if _, err := b.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false
			}
		}
		return true
	})
	if err == nil {
		// Not measured, but at 10,000 applications it is minutes of the run's time.
		b.logf("namespaces %s deleted in %.1fs", strings.Join(nss, ", "), time.Since(began).Seconds())
	}
	return err
}
