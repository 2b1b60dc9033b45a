package flinkapplication

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	testclock "k8s.io/utils/clock/testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	appfake "github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/fake"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/k8"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
	"github.com/flinkfsm/flinkfsm/pkg/controller/sessionjob"
)

const ns = "jobs"

// world is a unit-test universe: fake Kubernetes clientsets whose Deployments a tiny "kubelet"
// marks ready, one simulated Flink JobManager per ready cluster, and one fake clock driving both.
type world struct {
	t *testing.T
	// sessionJobMemory is each operator process's session job memory (session_kinds_test.go).
	sessionJobMu     sync.Mutex
	sessionJobMemory map[*Environment]*sessionjob.Memory
	clock            *testclock.FakeClock
	kube             *kubefake.Clientset
	apps             *appfake.Clientset
	env              *Environment
	recorder         *record.FakeRecorder
	storage          *flinksim.Storage
	timeline         *flinksim.Timeline
	server           *httptest.Server

	mu sync.Mutex
	// jms are the running JobManagers by versioned service name.
	jms map[string]*flinksim.JobManager
	// imageJars limits the jars an image has; absent images have every jar.
	imageJars map[string][]string
	// broken deployments never become ready (a bad image, say).
	broken map[string]bool
	// notReady deployments are reported not ready by Kubernetes while their processes still run,
	// as when a TaskManager fails its readiness probe.
	notReady map[string]bool
	// timings apply to every JobManager started from now on.
	timings flinksim.Timings
	// faults apply to every JobManager started from now on, but those of images in imageFaults.
	faults      flinksim.Faults
	imageFaults map[string]flinksim.Faults
	// loads are given to the JobManagers of an application's clusters when they start, by app name.
	loads map[string]flinksim.Load
	// taskManagerCap caps the TaskManagers an application's clusters get, whatever they ask for,
	// as a cluster out of room would.
	taskManagerCap map[string]int
	// rv keeps resourceVersions on FlinkApplication writes as the API server does.
	rv *resourceVersions
	// restCalls counts the requests the JobManagers were sent.
	restCalls atomic.Int64
	// bookFlushed is when the operator's checkpoint book was last written (flushBook).
	bookFlushed time.Time
	// answerTime, when set, is how long a JobManager takes to answer a request, on the fake clock:
	// the clock moves on by it before the answer, as it does while a slow JobManager keeps the
	// operator waiting.
	answerTime func(*http.Request) time.Duration
}

func newWorld(t *testing.T) *world {
	w := &world{
		t: t, clock: testclock.NewFakeClock(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)),
		kube: kubefake.NewClientset(), apps: appfake.NewSimpleClientset(),
		recorder: record.NewFakeRecorder(10000), storage: flinksim.NewStorage(), timeline: flinksim.NewTimeline(),
		jms: map[string]*flinksim.JobManager{}, imageJars: map[string][]string{}, broken: map[string]bool{},
		notReady:    map[string]bool{},
		imageFaults: map[string]flinksim.Faults{}, loads: map[string]flinksim.Load{}, taskManagerCap: map[string]int{},
	}
	w.rv = enforceResourceVersions(w.apps)
	w.honourSnapshotFinalizers()
	w.server = httptest.NewServer(http.HandlerFunc(w.route))
	t.Cleanup(func() {
		// Close waits for every request still being answered: one a test left hanging at a
		// JobManager (Faults.Hang) would hold it, and the whole test binary, for ever.
		w.server.CloseClientConnections()
		w.server.Close()
	})
	cfg := config.Default()
	cfg.MaxRetries = 3
	w.env = &Environment{Environment: kindpass.Environment{
		Kube: w.kube, Apps: w.apps, Clock: w.clock, Recorder: w.recorder, Config: cfg,
		Flink: client.New(client.DefaultConfig(), prometheus.NewRegistry()),
		FlinkURL: func(namespace, service string, _ int32) string {
			return w.server.URL + "/" + namespace + "/" + service
		},
		Observer: &clientObserver{w: w},
		Metrics:  kindpass.NewMetrics(prometheus.NewRegistry()),
		Book:     checkpointbook.New(w.kube, nil),
	}}
	w.bookFlushed = w.clock.Now()
	return w
}

// flushBook writes the operator's checkpoint book every checkpointBookInterval of simulated time,
// as the controller's loop does.
func (w *world) flushBook() {
	every := w.env.Config.CheckpointBookInterval.Duration
	if w.env.Book == nil || w.clock.Now().Sub(w.bookFlushed) < every {
		return
	}
	w.bookFlushed = w.clock.Now()
	if _, err := w.env.Book.Flush(context.Background()); err != nil {
		w.t.Logf("checkpoint book: %v", err)
	}
}

// honourSnapshotFinalizers makes the fake clientset delete FlinkSnapshots as the API server does: one
// with finalizers is only marked deleted, and goes once its last finalizer is removed (settle).
func (w *world) honourSnapshotFinalizers() {
	tracker := w.apps.Tracker()
	gvr := v1beta1.SchemeGroupVersion.WithResource("flinksnapshots")
	w.apps.PrependReactor("delete", "flinksnapshots", func(action k8stesting.Action) (bool, runtime.Object, error) {
		d := action.(k8stesting.DeleteAction)
		obj, err := tracker.Get(gvr, d.GetNamespace(), d.GetName())
		if err != nil {
			return false, nil, nil
		}
		s := obj.(*v1beta1.FlinkSnapshot).DeepCopy()
		if len(s.Finalizers) == 0 {
			return false, nil, nil
		}
		if s.DeletionTimestamp == nil {
			now := metav1.NewTime(w.clock.Now())
			s.DeletionTimestamp = &now
			return true, nil, tracker.Update(gvr, s, s.Namespace)
		}
		return true, nil, nil
	})
}

// collectSnapshots deletes the FlinkSnapshots marked deleted whose finalizers are all gone.
func (w *world) collectSnapshots() {
	list, err := w.apps.FlinkV1beta1().FlinkSnapshots(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(w.t, err)
	for _, s := range list.Items {
		if s.DeletionTimestamp != nil && len(s.Finalizers) == 0 {
			require.NoError(w.t, w.apps.Tracker().Delete(v1beta1.SchemeGroupVersion.WithResource("flinksnapshots"), ns, s.Name))
		}
	}
}

// route sends /<ns>/<service>/<flink path> to that cluster's JobManager; a cluster without one
// refuses the connection, as an unreachable JobManager does.
func (w *world) route(rw http.ResponseWriter, r *http.Request) {
	w.restCalls.Add(1)
	if w.answerTime != nil {
		w.clock.Step(w.answerTime(r))
	}
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
	w.mu.Lock()
	var jm *flinksim.JobManager
	if len(parts) >= 2 {
		jm = w.jms[parts[1]]
	}
	w.mu.Unlock()
	if jm == nil {
		if hj, ok := rw.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		http.Error(rw, "unreachable", http.StatusBadGateway)
		return
	}
	rest := "/"
	if len(parts) == 3 {
		rest += parts[2]
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = rest
	jm.Handler().ServeHTTP(rw, r2)
}

// settle plays kubelet and Flink: Deployments report their pods ready (unless broken), and every
// cluster whose JobManager is ready has a simulated JobManager sized by its ready TaskManagers.
func (w *world) settle() {
	ctx := context.Background()
	w.flushBook()
	w.collectSnapshots()
	deploys, err := w.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	require.NoError(w.t, err)
	live := map[string]bool{}
	byHash := map[string]*appsv1.Deployment{}
	for i := range deploys.Items {
		d := &deploys.Items[i]
		if w.notReady[d.Name] {
			if d.Status.ReadyReplicas != 0 {
				d.Status.ReadyReplicas, d.Status.AvailableReplicas = 0, 0
				_, err := w.kube.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
				require.NoError(w.t, err)
			}
		} else if !w.broken[d.Name] {
			want := replicas(d)
			if d.Status.ReadyReplicas != want || d.Status.ObservedGeneration != d.Generation {
				d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: want,
					ReadyReplicas: want, AvailableReplicas: want, UpdatedReplicas: want}
				_, err := w.kube.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
				require.NoError(w.t, err)
			}
		}
		if d.Labels[k8.ComponentLabel] == flink.TaskManagerComponent {
			byHash[d.Labels[k8.HashLabel]] = d
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range deploys.Items {
		d := &deploys.Items[i]
		if d.Labels[k8.ComponentLabel] != flink.JobManagerComponent || w.broken[d.Name] {
			continue
		}
		hash := d.Labels[k8.HashLabel]
		svc := d.Labels[k8.AppLabel] + "-" + hash
		live[svc] = true
		jm := w.jms[svc]
		if jm == nil {
			c := d.Spec.Template.Spec.Containers[0]
			props := ""
			for _, e := range c.Env {
				if e.Name == "FLINK_PROPERTIES" {
					props = e.Value
				}
			}
			var jars []string
			if j, ok := w.imageJars[c.Image]; ok {
				jars = j
			}
			ha := flink.ConfigHasHighAvailability(v1beta1.FlinkConfig(anyMap(flinksim.ParseFlinkProperties(props))))
			if ha && !w.hasConfigMap(svc+"-cluster-config-map") {
				// A JobManager that starts while its cluster's HA ConfigMaps are gone finds nothing to
				// recover, as in a Fleet: deleting them loses what HA kept.
				w.storage.ForgetHA("", svc)
			}
			version := ""
			if app, err := w.apps.FlinkV1beta1().FlinkApplications(ns).Get(ctx, d.Labels[k8.AppLabel], metav1.GetOptions{}); err == nil {
				version = app.Spec.FlinkVersion
			} else if c, err := w.apps.FlinkV1beta1().FlinkSessionClusters(ns).Get(ctx, d.Labels[k8.AppLabel], metav1.GetOptions{}); err == nil {
				version = c.Spec.FlinkVersion
			}
			jm = flinksim.NewJobManager(flinksim.Options{
				Clock: w.clock, Name: svc, FlinkConfig: flinksim.ParseFlinkProperties(props), Jars: jars,
				Timeline: w.timeline, AppKey: ns + "/" + d.Labels[k8.AppLabel], Storage: w.storage,
				FlinkVersion: version, Timings: w.timings,
			})
			if l, ok := w.loads[d.Labels[k8.AppLabel]]; ok {
				require.NoError(w.t, jm.SetLoad(l))
			}
			if f, ok := w.imageFaults[c.Image]; ok {
				jm.SetFaults(f)
			} else {
				jm.SetFaults(w.faults)
			}
			w.jms[svc] = jm
			if ha {
				w.writeHAConfigMap(svc, svc+"-cluster-config-map")
			}
		}
		tms := 0
		if tm := byHash[hash]; tm != nil && !w.broken[tm.Name] {
			tms = int(replicas(tm))
		}
		if limit, ok := w.taskManagerCap[d.Labels[k8.AppLabel]]; ok && tms > limit {
			tms = limit
		}
		jm.SetTaskManagers(tms)
	}
	for svc, jm := range w.jms {
		if !live[svc] {
			jm.Stop()
			delete(w.jms, svc)
		}
	}
}

// writeHAConfigMap creates an HA ConfigMap as a JobManager with Flink's Kubernetes HA does, named
// "<cluster id>-cluster-config-map" or "<cluster id>-<job id>-config-map", labelled as Flink 2.3
// labels them (app and type; Flink 1.x adds configmap-type=high-availability).
func (w *world) writeHAConfigMap(id, name string) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
		flink.HAClusterIDLabel: id, flink.FlinkObjectLabel: flink.FlinkObject}}}
	if _, err := w.kube.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		w.t.Fatalf("creating HA ConfigMap %s: %v", name, err)
	}
}

// hasConfigMap tells whether the namespace holds the ConfigMap.
func (w *world) hasConfigMap(name string) bool {
	_, err := w.kube.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		w.t.Fatalf("reading ConfigMap %s: %v", name, err)
	}
	return err == nil
}

func anyMap(m map[string]string) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (w *world) jm(app *v1beta1.FlinkApplication, hash string) *flinksim.JobManager {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.jms[flink.VersionedServiceName(app, hash)]
}

func (w *world) create(app *v1beta1.FlinkApplication) *v1beta1.FlinkApplication {
	app.Namespace = ns
	created, err := w.apps.FlinkV1beta1().FlinkApplications(ns).Create(context.Background(), app, metav1.CreateOptions{})
	require.NoError(w.t, err)
	return created
}

func (w *world) get(name string) *v1beta1.FlinkApplication {
	app, err := w.apps.FlinkV1beta1().FlinkApplications(ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(w.t, err)
	return app
}

// update changes the spec as `kubectl apply` would, bumping the generation.
func (w *world) update(name string, change func(*v1beta1.FlinkApplication)) {
	app := w.get(name)
	change(app)
	app.Generation++
	_, err := w.apps.FlinkV1beta1().FlinkApplications(ns).Update(context.Background(), app, metav1.UpdateOptions{})
	require.NoError(w.t, err)
}

// reconcile runs one pass, then lets the clock run to when the operator asked to look again
// (never more than maxStep, so that simulated Flink time passes in small steps too).
func (w *world) reconcile(name string) (time.Duration, error) {
	w.settle()
	after, err := w.env.Reconcile(context.Background(), ns, name)
	step := after
	if err != nil || step <= 0 || step > maxStep {
		step = maxStep
	}
	w.clock.Step(step)
	return after, err
}

const maxStep = 500 * time.Millisecond

// runUntil reconciles until cond holds for the stored application, failing after a simulated hour.
func (w *world) runUntil(name string, what string, cond func(*v1beta1.FlinkApplication) bool) *v1beta1.FlinkApplication {
	w.t.Helper()
	deadline := w.clock.Now().Add(time.Hour)
	for w.clock.Now().Before(deadline) {
		if _, err := w.reconcile(name); err != nil {
			w.t.Logf("reconcile: %v", err)
		}
		if app, err := w.apps.FlinkV1beta1().FlinkApplications(ns).Get(context.Background(), name, metav1.GetOptions{}); err == nil && cond(app) {
			return app
		}
	}
	app := w.get(name)
	w.t.Fatalf("%s: not reached within a simulated hour; phase %s, reason %q, history %v", what, app.Status.Phase, app.Status.Reason, app.Status.History)
	return nil
}

func (w *world) runUntilPhase(name string, phase v1beta1.FlinkApplicationPhase) *v1beta1.FlinkApplication {
	w.t.Helper()
	return w.runUntil(name, "phase "+string(phase), func(a *v1beta1.FlinkApplication) bool { return a.Status.Phase == phase })
}

// events drains the recorded Events.
func (w *world) events() []string {
	var out []string
	for {
		select {
		case e := <-w.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// clientObserver reads straight from the fake clientsets, so a test never waits for a cache.
type clientObserver struct{ w *world }

func (o *clientObserver) Application(namespace, name string) (*v1beta1.FlinkApplication, error) {
	return o.w.apps.FlinkV1beta1().FlinkApplications(namespace).Get(context.Background(), name, metav1.GetOptions{})
}

func (o *clientObserver) UIIngress(app *v1beta1.FlinkApplication) (*networkingv1.Ingress, error) {
	ing, err := o.w.kube.NetworkingV1().Ingresses(app.Namespace).Get(context.Background(), app.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return ing, err
}

func (o *clientObserver) Owned(app flink.ClusterOwner) (map[string]*ClusterObjects, *corev1.Service, error) {
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: k8.AppLabel + "=" + app.Name}
	deploys, err := o.w.kube.AppsV1().Deployments(app.Namespace).List(ctx, sel)
	if err != nil {
		return nil, nil, err
	}
	services, err := o.w.kube.CoreV1().Services(app.Namespace).List(ctx, sel)
	if err != nil {
		return nil, nil, err
	}
	var ds []*appsv1.Deployment
	for i := range deploys.Items {
		ds = append(ds, &deploys.Items[i])
	}
	var ss []*corev1.Service
	for i := range services.Items {
		ss = append(ss, &services.Items[i])
	}
	pods, err := o.w.kube.CoreV1().Pods(app.Namespace).List(ctx, sel)
	if err != nil {
		return nil, nil, err
	}
	var ps []*cachedPod
	for i := range pods.Items {
		ps = append(ps, clusters.PodForCache(&pods.Items[i]))
	}
	cms, err := o.w.kube.CoreV1().ConfigMaps(app.Namespace).List(ctx, sel)
	if err != nil {
		return nil, nil, err
	}
	var cs []*corev1.ConfigMap
	for i := range cms.Items {
		cs = append(cs, &cms.Items[i])
	}
	clusters, generic := groupOwned(app, ds, ss, ps, cs)
	return clusters, generic, nil
}

func (o *clientObserver) HAConfigMaps(namespace, owner string) (map[string][]string, error) {
	cms, err := o.w.kube.CoreV1().ConfigMaps(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: flink.HAConfigMapSelector})
	if err != nil {
		return nil, err
	}
	var objs []interface{}
	for i := range cms.Items {
		if o, _, ok := flink.HAConfigMapCluster(&cms.Items[i]); ok && o == owner {
			objs = append(objs, &cms.Items[i])
		}
	}
	return haConfigMapsByHash(objs), nil
}

func (o *clientObserver) CheckpointBookPage(namespace, name string) (*corev1.ConfigMap, error) {
	page, err := o.w.kube.CoreV1().ConfigMaps(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return page, err
}

// wordcount is a small application in the shape of the Lyft operator's example.
func wordcount(name string) *v1beta1.FlinkApplication {
	slots := int32(2)
	return &v1beta1.FlinkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1},
		Spec: v1beta1.FlinkApplicationSpec{
			ClusterSpec: v1beta1.ClusterSpec{
				Image:        "flink-wordcount:1",
				FlinkVersion: "1.20",
				FlinkConfig: v1beta1.FlinkConfig{
					"state.savepoints.dir":             "file:///checkpoints/savepoints",
					"state.checkpoints.dir":            "file:///checkpoints/checkpoints",
					"execution.checkpointing.interval": "10s",
				},
			},
			JarName: "wordcount.jar", EntryClass: "org.apache.flink.WordCount", Parallelism: 3,
			TaskManagerConfig: v1beta1.TaskManagerConfig{TaskSlots: &slots},
		},
	}
}

func (o *clientObserver) Snapshots(namespace, kind, owner string) ([]*v1beta1.FlinkSnapshot, error) {
	list, err := o.w.apps.FlinkV1beta1().FlinkSnapshots(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*v1beta1.FlinkSnapshot
	for i := range list.Items {
		if s := &list.Items[i]; s.Spec.Owner.Kind == kind && s.Spec.Owner.Name == owner {
			out = append(out, s)
		}
	}
	return out, nil
}

func (o *clientObserver) SnapshotsIn(namespace string) ([]*v1beta1.FlinkSnapshot, error) {
	list, err := o.w.apps.FlinkV1beta1().FlinkSnapshots(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*v1beta1.FlinkSnapshot, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

func (o *clientObserver) ApplicationsIn(namespace string) ([]*v1beta1.FlinkApplication, error) {
	list, err := o.w.apps.FlinkV1beta1().FlinkApplications(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return pointersTo(list.Items), nil
}

func (o *clientObserver) SessionJobsIn(namespace string) ([]*v1beta1.FlinkSessionJob, error) {
	list, err := o.w.apps.FlinkV1beta1().FlinkSessionJobs(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return pointersTo(list.Items), nil
}

func (o *clientObserver) SessionClustersIn(namespace string) ([]*v1beta1.FlinkSessionCluster, error) {
	list, err := o.w.apps.FlinkV1beta1().FlinkSessionClusters(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return pointersTo(list.Items), nil
}

func (o *clientObserver) Snapshot(namespace, name string) (*v1beta1.FlinkSnapshot, error) {
	return o.w.apps.FlinkV1beta1().FlinkSnapshots(namespace).Get(context.Background(), name, metav1.GetOptions{})
}

// pointersTo points at each item of a list, in place.
func pointersTo[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// Finalizer holds an object until its deletion dealt with its job and clusters (lifecycle.Finalizer).
const Finalizer = lifecycle.Finalizer

// hasFinalizer tells whether the object carries the operator's finalizer (lifecycle.HasFinalizer).
func hasFinalizer(obj metav1.Object) bool { return lifecycle.HasFinalizer(obj) }
