package operator

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	appfake "github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/fake"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flinkapplication"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
	"github.com/flinkfsm/flinkfsm/pkg/internal/apifake"
)

// controllerFixture is sample-controller's fixture for the Controller: fake clientsets, the
// Controller NewController builds over them with its informers running and no workers, so that
// what the event handlers put in the queue can be read.
//
// One Controller serves every test of this file: NewController cannot be called twice in a
// process, as its workqueue registers metrics under a fixed name with the global Prometheus
// registry (flytestdlib's workqueue metrics provider panics on the second registration). Each test
// uses names of its own and starts from an empty queue.
type controllerFixture struct {
	t    *testing.T
	ctx  context.Context
	kube *kubefake.Clientset
	apps *appfake.Clientset
	// versions is the fake API server's resourceVersion keeping, which handles every write.
	versions *apifake.ResourceVersions
	env      *flinkapplication.Environment
	c        *Controller
	// run makes the names of one test's objects its own.
	run string
	// kubeListSelectors are the label selectors the informers listed each Kubernetes resource by.
	kubeListSelectors func() map[string]string
}

// n is name made unique to this run of the test.
func (f *controllerFixture) n(name string) string { return name + "-" + f.run }

var sharedController struct {
	once sync.Once
	f    controllerFixture
	err  error
	runs int
}

func newControllerFixture(t *testing.T) *controllerFixture {
	sharedController.once.Do(func() { sharedController.err = startController(&sharedController.f) })
	require.NoError(t, sharedController.err)
	f := sharedController.f
	f.t = t
	sharedController.runs++
	f.run = strconv.Itoa(sharedController.runs)
	// Whatever an earlier test left is taken out of the queue.
	marker := f.n("start-of-" + strings.ToLower(t.Name()))
	f.createApp(appNamed(marker))
	f.until(marker)
	f.expectEmpty()
	return &f
}

func startController(f *controllerFixture) error {
	f.kube, f.apps = kubefake.NewClientset(), appfake.NewSimpleClientset()
	f.versions = apifake.EnforceResourceVersions(f.apps)
	// The fake clientsets do not replay what happened between an informer's list and its watch;
	// objects are created only once every informer watches.
	watches := f.countWatches()
	f.kubeListSelectors = f.recordListSelectors()
	cfg := config.Default()
	f.env = &flinkapplication.Environment{Environment: kindpass.Environment{
		Kube: f.kube, Apps: f.apps, Clock: clock.RealClock{}, Recorder: record.NewFakeRecorder(1000), Config: cfg,
		Flink: client.New(client.DefaultConfig(), prometheus.NewRegistry()),
		FlinkURL: func(namespace, service string, _ int32) string {
			return "http://127.0.0.1:1/" + namespace + "/" + service
		},
		Metrics: kindpass.NewMetrics(prometheus.NewRegistry()),
	}}
	f.c = NewController(f.env)
	f.c.workers = 0 // the tests read the queue
	f.ctx = context.Background()
	go func() { _ = f.c.Run(f.ctx) }()
	// FlinkApplications, FlinkSessionClusters, FlinkSessionJobs, Deployments, Services, pods, UI
	// Ingresses, logging ConfigMaps, Flink's HA ConfigMaps and FlinkSnapshots.
	for deadline := time.Now().Add(10 * time.Second); watches() < 10; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("informers not watching")
		}
	}
	return nil
}

// countWatches counts the watches the informers opened on both clientsets.
func (f *controllerFixture) countWatches() func() int {
	var mu sync.Mutex
	n := 0
	count := func(k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		return false, nil, nil
	}
	f.kube.PrependWatchReactor("*", count)
	f.apps.PrependWatchReactor("*", count)
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// recordListSelectors records the label selector of each list on the Kubernetes clientset, by resource.
func (f *controllerFixture) recordListSelectors() func() map[string]string {
	var mu sync.Mutex
	selectors := map[string]string{}
	f.kube.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if l, ok := a.(k8stesting.ListAction); ok {
			mu.Lock()
			defer mu.Unlock()
			selectors[a.GetResource().Resource] = l.GetListRestrictions().Labels.String()
		}
		return false, nil, nil
	})
	return func() map[string]string {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(selectors)
	}
}

// next takes the next key from the queue, failing when none comes within five seconds.
func (f *controllerFixture) next() cache.ObjectName {
	f.t.Helper()
	key, ok := f.poll(5 * time.Second)
	require.True(f.t, ok, "nothing was enqueued")
	return key
}

func (f *controllerFixture) poll(within time.Duration) (cache.ObjectName, bool) {
	deadline := time.Now().Add(within)
	for {
		key, ok := f.pollAny(time.Until(deadline))
		if !ok {
			return cache.ObjectName{}, false
		}
		// A pod wakes the session cluster of its label's name too; these tests are about applications.
		if key.Kind == v1beta1.FlinkApplicationKind {
			return key.ObjectName, true
		}
	}
}

// pollAny takes the next key of any kind.
func (f *controllerFixture) pollAny(within time.Duration) (queueKey, bool) {
	deadline := time.Now().Add(within)
	for f.c.queue.Len() == 0 {
		if time.Now().After(deadline) {
			return queueKey{}, false
		}
		time.Sleep(time.Millisecond)
	}
	key, _ := f.c.queue.Get()
	f.c.queue.Done(key)
	f.c.queue.Forget(key)
	return key, true
}

// until drains the queue up to and including marker, which an event queued after everything before
// it brings, and returns what came before it.
func (f *controllerFixture) until(marker string) []string {
	f.t.Helper()
	var before []string
	for {
		key := f.next()
		if key.Name == marker {
			return before
		}
		before = append(before, key.Name)
	}
}

func (f *controllerFixture) expectEmpty() {
	f.t.Helper()
	assert.Zero(f.t, f.c.queue.Len(), "nothing else is enqueued")
}

func (f *controllerFixture) createApp(app *v1beta1.FlinkApplication) *v1beta1.FlinkApplication {
	f.t.Helper()
	app.Namespace = ns
	created, err := f.apps.FlinkV1beta1().FlinkApplications(ns).Create(f.ctx, app, metav1.CreateOptions{})
	require.NoError(f.t, err)
	return created
}

// updateApp changes the spec as `kubectl apply` would, bumping the generation.
func (f *controllerFixture) updateApp(name string, change func(*v1beta1.FlinkApplication)) {
	f.t.Helper()
	app, err := f.apps.FlinkV1beta1().FlinkApplications(ns).Get(f.ctx, name, metav1.GetOptions{})
	require.NoError(f.t, err)
	change(app)
	app.Generation++
	_, err = f.apps.FlinkV1beta1().FlinkApplications(ns).Update(f.ctx, app, metav1.UpdateOptions{})
	require.NoError(f.t, err)
}

func (f *controllerFixture) create(obj runtime.Object) {
	f.t.Helper()
	var err error
	switch o := obj.(type) {
	case *appsv1.Deployment:
		_, err = f.kube.AppsV1().Deployments(ns).Create(f.ctx, o, metav1.CreateOptions{})
	case *corev1.Service:
		_, err = f.kube.CoreV1().Services(ns).Create(f.ctx, o, metav1.CreateOptions{})
	case *corev1.Pod:
		_, err = f.kube.CoreV1().Pods(ns).Create(f.ctx, o, metav1.CreateOptions{})
	default:
		f.t.Fatalf("cannot create %T", obj)
	}
	require.NoError(f.t, err)
}

func appNamed(name string) *v1beta1.FlinkApplication {
	app := wordcount(name)
	app.Namespace, app.UID = ns, types.UID("uid-"+name)
	app.APIVersion, app.Kind = v1beta1.SchemeGroupVersion.String(), "FlinkApplication"
	return app
}

func ownedMeta(name string, owner *v1beta1.FlinkApplication) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{k8.AppLabel: owner.Name, k8.HashLabel: "abc"}}
	m.OwnerReferences = []metav1.OwnerReference{k8.OwnerReference(owner)}
	return m
}

func jobManagerPod(name, app string) *corev1.Pod {
	controller := true
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
		k8.AppLabel: app, k8.HashLabel: "abc", k8.ComponentLabel: flink.JobManagerComponent,
	}, OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name + "-rs", UID: "rs", Controller: &controller}}}}
}

// A Deployment, Service or JobManager pod of an application wakes the application up, so that a
// phase waiting for them moves on the event instead of on a poll.
func TestControllerEnqueuesTheApplicationOfItsObjects(t *testing.T) {
	f := newControllerFixture(t)
	app := appNamed(f.n("owned"))
	// A pod wakes an application in the cache.
	f.createApp(app.DeepCopy())
	assert.Equal(t, cache.ObjectName{Namespace: ns, Name: f.n("owned")}, f.next(), "the application itself")

	f.create(&appsv1.Deployment{ObjectMeta: ownedMeta(f.n("owned-abc-jm"), app)})
	assert.Equal(t, cache.ObjectName{Namespace: ns, Name: f.n("owned")}, f.next(), "Deployment controlled by the application")
	f.create(&corev1.Service{ObjectMeta: ownedMeta(f.n("owned-abc"), app)})
	assert.Equal(t, cache.ObjectName{Namespace: ns, Name: f.n("owned")}, f.next(), "Service controlled by the application")
	// Pods are controlled by a ReplicaSet, as the ReplicaSet controller makes them; the app label
	// names the application.
	f.create(jobManagerPod(f.n("owned-abc-jm-0"), f.n("owned")))
	assert.Equal(t, cache.ObjectName{Namespace: ns, Name: f.n("owned")}, f.next(), "JobManager pod with the app label")

	// An owner that is not a FlinkApplication, or none, wakes nothing.
	other := ownedMeta(f.n("not-ours"), app)
	other.Labels = nil
	other.OwnerReferences[0].Kind = "Deployment"
	f.create(&appsv1.Deployment{ObjectMeta: other})
	f.create(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: f.n("unowned"), Namespace: ns}})
	f.create(&appsv1.Deployment{ObjectMeta: ownedMeta(f.n("owned-marker-jm"), appNamed(f.n("owned-marker")))})
	assert.Empty(t, f.until(f.n("owned-marker")), "objects of no FlinkApplication")
	f.create(&corev1.Service{ObjectMeta: ownedMeta(f.n("owned-marker"), appNamed(f.n("owned-marker")))})
	assert.Empty(t, f.until(f.n("owned-marker")))
	f.expectEmpty()
}

// An application event enqueues the application when its resourceVersion changed. An informer
// resync delivers the cached object again as an update with the same resourceVersion; that wakes
// nothing, or every application would be reconciled at each resync.
func TestControllerIgnoresAResyncOfAnApplication(t *testing.T) {
	f := newControllerFixture(t)
	app := f.createApp(appNamed(f.n("resync")))
	assert.Equal(t, f.n("resync"), f.next().Name, "a new application")

	// The object tracker under the fake clientset stores and announces the object unchanged,
	// resourceVersion included, as a resync does.
	gvr := v1beta1.SchemeGroupVersion.WithResource("flinkapplications")
	require.NoError(t, f.apps.Tracker().Update(gvr, app.DeepCopy(), ns))
	f.createApp(appNamed(f.n("resync-marker")))
	assert.Empty(t, f.until(f.n("resync-marker")), "an update with the same resourceVersion")

	// A user's change is a new resourceVersion.
	app.Spec.Parallelism = 6
	app.Generation++
	_, err := f.apps.FlinkV1beta1().FlinkApplications(ns).Update(f.ctx, app, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, f.n("resync"), f.next().Name, "a spec change")

	require.NoError(t, f.apps.FlinkV1beta1().FlinkApplications(ns).Delete(f.ctx, f.n("resync"), metav1.DeleteOptions{}))
	assert.Equal(t, f.n("resync"), f.next().Name, "a deleted application")
	f.expectEmpty()
}

// The operator's own status write comes back from the informer as an update with a new
// resourceVersion. The pass that wrote it already asked for its next look, so the echo does not
// queue the application again: at a thousand applications every echo would be a pass with Flink
// calls for nothing. A pass that finds the cache older than its own last write does not need the
// echo either: it retries shortly (kindpass.Environment.StaleCache). Anyone else's write still wakes the application.
func TestControllerIgnoresTheEchoOfItsOwnStatusWrite(t *testing.T) {
	f := newControllerFixture(t)
	// An application whose first pass writes status and adds the finalizer, and creates nothing:
	// its deployment mode is not supported.
	app := appNamed(f.n("echo"))
	app.Spec.DeploymentMode = "Canary"
	f.createApp(app)
	require.Equal(t, f.n("echo"), f.next().Name)

	// The passes are run as a worker runs them, but without the requeue the worker adds after a
	// pass, so that what enters the queue comes from the informers.
	_, err := f.env.Reconcile(f.ctx, ns, f.n("echo"))
	require.NoError(t, err)
	written, err := f.apps.FlinkV1beta1().FlinkApplications(ns).Get(f.ctx, f.n("echo"), metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, v1beta1.PhaseDeployFailed, written.Status.Phase, "the pass wrote status")
	f.createApp(appNamed(f.n("echo-marker")))
	// The finalizer the pass added is a change a pass reads; the status write after it is not.
	assert.LessOrEqual(t, len(f.until(f.n("echo-marker"))), 1, "only the finalizer's update enqueues the application")

	// A spec change wakes it; the pass then writes status only, and that write's echo wakes nothing.
	f.updateApp(f.n("echo"), func(a *v1beta1.FlinkApplication) { a.Spec.DeploymentMode = "Canary2" })
	require.Equal(t, f.n("echo"), f.next().Name)
	_, err = f.env.Reconcile(f.ctx, ns, f.n("echo"))
	require.NoError(t, err)
	again, err := f.apps.FlinkV1beta1().FlinkApplications(ns).Get(f.ctx, f.n("echo"), metav1.GetOptions{})
	require.NoError(t, err)
	require.NotEqual(t, written.ResourceVersion, again.ResourceVersion, "the pass wrote status")
	f.createApp(appNamed(f.n("echo-marker-2")))
	assert.Empty(t, f.until(f.n("echo-marker-2")), "the echo of the status write enqueues nothing")

	// Someone else's status write wakes it.
	_, err = f.apps.FlinkV1beta1().FlinkApplications(ns).Patch(f.ctx, f.n("echo"), types.MergePatchType,
		[]byte(`{"status":{"reason":"edited by hand"}}`), metav1.PatchOptions{}, "status")
	require.NoError(t, err)
	assert.Equal(t, f.n("echo"), f.next().Name)
	f.expectEmpty()
}

// The cluster-to-jobs index: a session cluster's changes, and those of its Deployments, wake every
// job that names it; a job's changes wake its cluster, which lists its jobs and holds its deletion.
func TestControllerWakesSessionJobsWithTheirCluster(t *testing.T) {
	f := newControllerFixture(t)
	cluster, other := f.n("shared"), f.n("other")
	for _, j := range []struct{ name, cluster string }{{f.n("a"), cluster}, {f.n("b"), cluster}, {f.n("c"), other}} {
		_, err := f.apps.FlinkV1beta1().FlinkSessionJobs(ns).Create(f.ctx, &v1beta1.FlinkSessionJob{
			ObjectMeta: metav1.ObjectMeta{Name: j.name, Namespace: ns},
			Spec:       v1beta1.FlinkSessionJobSpec{ClusterName: j.cluster},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	drain := func(want int) map[queueKey]bool {
		got := map[queueKey]bool{}
		for len(got) < want {
			key, ok := f.pollAny(5 * time.Second)
			require.True(t, ok, "only %v enqueued", got)
			got[key] = true
		}
		return got
	}
	key := func(kind, name string) queueKey {
		return queueKey{Kind: kind, ObjectName: cache.ObjectName{Namespace: ns, Name: name}}
	}
	// Each job and the cluster it names.
	got := drain(5)
	for _, k := range []queueKey{key(v1beta1.FlinkSessionJobKind, f.n("a")), key(v1beta1.FlinkSessionJobKind, f.n("b")), key(v1beta1.FlinkSessionJobKind, f.n("c")),
		key(v1beta1.FlinkSessionClusterKind, cluster), key(v1beta1.FlinkSessionClusterKind, other)} {
		assert.True(t, got[k], "%s enqueued", k)
	}

	c, err := f.apps.FlinkV1beta1().FlinkSessionClusters(ns).Create(f.ctx, &v1beta1.FlinkSessionCluster{
		ObjectMeta: metav1.ObjectMeta{Name: cluster, Namespace: ns, UID: types.UID(cluster)}}, metav1.CreateOptions{})
	require.NoError(t, err)
	got = drain(3)
	assert.Equal(t, map[queueKey]bool{key(v1beta1.FlinkSessionClusterKind, cluster): true, key(v1beta1.FlinkSessionJobKind, f.n("a")): true,
		key(v1beta1.FlinkSessionJobKind, f.n("b")): true}, got, "the cluster and its jobs, not the other cluster's")

	owner := flink.OwnerFromSessionCluster(c)
	_, err = f.kube.AppsV1().Deployments(ns).Create(f.ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
		Name: cluster + "-abc-jm", Namespace: ns, OwnerReferences: []metav1.OwnerReference{k8.ControllerReference(c, owner.Kind)}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	got = drain(3)
	assert.True(t, got[key(v1beta1.FlinkSessionJobKind, f.n("a"))] && got[key(v1beta1.FlinkSessionJobKind, f.n("b"))], "a Deployment of the cluster wakes its jobs: %v", got)
	f.expectEmpty()
}

// A pod's app label names an application or a session cluster, and the pod wakes the one that
// exists, with the session jobs that name a cluster of that name. A new leader receives every pod of
// the fleet as an add: waking a session cluster of each application's name as well gave 10,000
// passes at a takeover of 10,000 applications that only found no such object.
func TestAPodWakesTheObjectItsLabelNamesAndNoOther(t *testing.T) {
	f := newControllerFixture(t)
	key := func(kind, name string) queueKey {
		return queueKey{Kind: kind, ObjectName: cache.ObjectName{Namespace: ns, Name: name}}
	}
	// drain waits up to 5 s each for at least want keys (the informers deliver events when they
	// will), then takes whatever else comes until the queue stays empty for 200 ms.
	drain := func(want int) map[queueKey]bool {
		got := map[queueKey]bool{}
		for {
			within := 200 * time.Millisecond
			if len(got) < want {
				within = 5 * time.Second
			}
			k, ok := f.pollAny(within)
			if !ok {
				return got
			}
			got[k] = true
		}
	}
	app := f.n("pod-app")
	f.createApp(appNamed(app))
	assert.Equal(t, map[queueKey]bool{key(v1beta1.FlinkApplicationKind, app): true}, drain(1))
	f.create(jobManagerPod(app+"-abc-jm-0", app))
	assert.Equal(t, map[queueKey]bool{key(v1beta1.FlinkApplicationKind, app): true}, drain(1), "an application's pod")

	cluster := f.n("pod-session")
	_, err := f.apps.FlinkV1beta1().FlinkSessionClusters(ns).Create(f.ctx, &v1beta1.FlinkSessionCluster{
		ObjectMeta: metav1.ObjectMeta{Name: cluster, Namespace: ns, UID: types.UID(cluster)}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = f.apps.FlinkV1beta1().FlinkSessionJobs(ns).Create(f.ctx, &v1beta1.FlinkSessionJob{
		ObjectMeta: metav1.ObjectMeta{Name: f.n("pod-job"), Namespace: ns},
		Spec:       v1beta1.FlinkSessionJobSpec{ClusterName: cluster},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, map[queueKey]bool{key(v1beta1.FlinkSessionClusterKind, cluster): true, key(v1beta1.FlinkSessionJobKind, f.n("pod-job")): true}, drain(2))
	f.create(jobManagerPod(cluster+"-abc-jm-0", cluster))
	assert.Equal(t, map[queueKey]bool{key(v1beta1.FlinkSessionClusterKind, cluster): true, key(v1beta1.FlinkSessionJobKind, f.n("pod-job")): true}, drain(2),
		"a session cluster's pod")

	// A pod whose owner is gone, or not yet in the cache, wakes nothing: the owner's own add event
	// brings its first pass, whichever informer lists first.
	f.create(jobManagerPod(f.n("pod-none")+"-abc-jm-0", f.n("pod-none")))
	assert.Empty(t, drain(0), "a pod of nothing the operator has")
	f.expectEmpty()
}

// The Deployment, Service and pod informers list only what carries the operator's app label: the
// operator caches its own objects, not every Deployment and Service of the namespaces it watches.
func TestControllerCachesOnlyTheOperatorsObjects(t *testing.T) {
	f := newControllerFixture(t)
	got := f.kubeListSelectors()
	for _, resource := range []string{"deployments", "services", "pods"} {
		assert.Equal(t, k8.AppLabel, got[resource], "%s are listed by the operator's label", resource)
	}
}

// The caches hold no managedFields: the operator never reads them, and at a thousand applications
// they are megabytes of memory.
func TestControllerCachesNoManagedFields(t *testing.T) {
	f := newControllerFixture(t)
	owned := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:image":{}}}`)}}}
	app := appNamed(f.n("fields"))
	app.ManagedFields = owned
	app = f.createApp(app)
	d := &appsv1.Deployment{ObjectMeta: ownedMeta(flink.JobManagerName(app, "abc"), app)}
	d.ManagedFields = owned
	f.create(d)
	f.until(app.Name)
	require.Eventually(t, func() bool {
		clusters, _, err := f.env.Observer.Owned(flink.OwnerFromApplication(app))
		return err == nil && clusters["abc"] != nil && clusters["abc"].JobManager != nil
	}, 5*time.Second, time.Millisecond)

	cached, err := f.env.Observer.Application(ns, app.Name)
	require.NoError(t, err)
	assert.Empty(t, cached.ManagedFields, "FlinkApplication cached without managedFields")
	clusters, _, _ := f.env.Observer.Owned(flink.OwnerFromApplication(app))
	assert.Empty(t, clusters["abc"].JobManager.ManagedFields, "Deployment cached without managedFields")
}

// The echo of a status write can reach the informer before the write's answer reaches the pass that
// sent it (the API server sends both at once). It is still our own echo, and wakes nothing: each such
// extra pass would cost a REST call to Flink.
func TestControllerIgnoresAnEchoThatOvertakesItsWrite(t *testing.T) {
	f := newControllerFixture(t)
	slow := f.n("overtaken")
	f.apps.PrependReactor("patch", "flinkapplications", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p, ok := a.(k8stesting.PatchAction)
		if !ok || p.GetSubresource() != "status" || p.GetName() != slow {
			return false, nil, nil
		}
		_, obj, err := f.versions.React(a)
		// The write is stored and its watch event sent; its answer is late.
		time.Sleep(300 * time.Millisecond)
		return true, obj, err
	})
	app := appNamed(slow)
	app.Spec.DeploymentMode = "Canary"
	f.createApp(app)
	require.Equal(t, slow, f.next().Name)
	_, err := f.env.Reconcile(f.ctx, ns, slow)
	require.NoError(t, err)
	f.createApp(appNamed(f.n("overtaken-marker")))
	assert.LessOrEqual(t, len(f.until(f.n("overtaken-marker"))), 1, "only the finalizer's update enqueues the application")

	f.updateApp(slow, func(a *v1beta1.FlinkApplication) { a.Spec.DeploymentMode = "Canary2" })
	require.Equal(t, slow, f.next().Name)
	_, err = f.env.Reconcile(f.ctx, ns, slow)
	require.NoError(t, err)
	f.createApp(appNamed(f.n("overtaken-marker-2")))
	assert.Empty(t, f.until(f.n("overtaken-marker-2")), "the echo that came before the write's answer enqueues nothing")
}

// A pass reads its application's objects from an index by app label, not from a list of the
// namespace: each application finds its own objects and no one else's, whatever the fleet's size.
func TestControllerFindsEachApplicationsObjectsByItsLabel(t *testing.T) {
	f := newControllerFixture(t)
	var apps []*v1beta1.FlinkApplication
	for _, name := range []string{f.n("a"), f.n("ab")} {
		app := f.createApp(appNamed(name))
		f.create(&appsv1.Deployment{ObjectMeta: ownedMeta(flink.JobManagerName(app, "abc"), app)})
		f.create(&corev1.Service{ObjectMeta: ownedMeta(flink.VersionedServiceName(app, "abc"), app)})
		apps = append(apps, app)
	}
	for _, app := range apps {
		require.Eventually(t, func() bool {
			clusters, _, err := f.env.Observer.Owned(flink.OwnerFromApplication(app))
			return err == nil && clusters["abc"] != nil && clusters["abc"].JobManager != nil && clusters["abc"].Service != nil
		}, 5*time.Second, time.Millisecond, "objects of %s", app.Name)
		clusters, _, _ := f.env.Observer.Owned(flink.OwnerFromApplication(app))
		assert.Equal(t, flink.JobManagerName(app, "abc"), clusters["abc"].JobManager.Name)
		assert.Equal(t, flink.VersionedServiceName(app, "abc"), clusters["abc"].Service.Name)
	}
}

// A FlinkSnapshot a user creates wakes its owner, whose pass then finds it in the cache; the
// status the pass writes to it wakes nobody.
func TestControllerWakesTheOwnerOfAFlinkSnapshot(t *testing.T) {
	f := newControllerFixture(t)
	owner := f.n("snapped")
	snap := &v1beta1.FlinkSnapshot{ObjectMeta: metav1.ObjectMeta{Name: f.n("snap"), Namespace: ns},
		Spec: v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: v1beta1.FlinkApplicationKind, Name: owner}, Type: v1beta1.SnapshotSavepoint}}
	created, err := f.apps.FlinkV1beta1().FlinkSnapshots(ns).Create(f.ctx, snap, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, owner, f.next().Name, "a new FlinkSnapshot")
	require.Eventually(t, func() bool {
		got, err := f.env.Observer.Snapshots(ns, v1beta1.FlinkApplicationKind, owner)
		return err == nil && len(got) == 1
	}, 5*time.Second, 10*time.Millisecond, "the owner's pass finds it")

	created.Status.State = v1beta1.StatePending
	created.ResourceVersion = "2"
	_, err = f.apps.FlinkV1beta1().FlinkSnapshots(ns).UpdateStatus(f.ctx, created, metav1.UpdateOptions{})
	require.NoError(t, err)
	f.createApp(appNamed(f.n("snapped-marker")))
	assert.Empty(t, f.until(f.n("snapped-marker")), "a status write")
}
