package flinksim

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// Pod labels that identify a Flink cluster and a pod's role in it.
const (
	LabelApp            = "flink-app"
	LabelAppHash        = "flink-app-hash"
	LabelDeploymentType = "flink-deployment-type"
	RoleJobManager      = "jobmanager"
	RoleTaskManager     = "taskmanager"
	jobManagerContainer = "jobmanager"
	flinkPropertiesEnv  = "FLINK_PROPERTIES"
	flinkVersionEnv     = "FLINK_VERSION"
)

// FleetOptions configures a Fleet.
type FleetOptions struct {
	// Clock drives every JobManager. Nil means the real clock.
	Clock clock.PassiveClock
	// Namespace limits the pods watched; empty watches all namespaces.
	Namespace string
	// Timings apply to every JobManager.
	Timings Timings
	// Seed seeds each JobManager's fault randomness (Seed, Seed+1, ... in
	// creation order).
	Seed int64
	// Logf, when set, receives one line per JobManager start, crash and scale change.
	Logf func(format string, args ...any)
}

// Fleet runs one simulated JobManager per Flink cluster found on a Kubernetes
// API, following the cluster's pods: a JobManager runs in a Ready jobmanager
// pod and its process ends when that pod stops being Ready or goes away; the
// next Ready jobmanager pod of the cluster starts a new one, empty without HA
// and recovering the cluster's jobs with HA. HA stores are per namespace and
// cluster id; a cluster that names none uses its service "<app>-<hash>".
type Fleet struct {
	kube     kubernetes.Interface
	opts     FleetOptions
	storage  *Storage
	timeline *Timeline

	mu sync.Mutex
	// pods indexes the informer's pods by cluster (clusterIndex): a pod event looks at its own
	// cluster's pods, not at every pod of the namespace, which with thousands of clusters in one
	// namespace made each event cost as much as the namespace and the whole fleet quadratic.
	pods      cache.Indexer
	clusters  map[clusterKey]*cluster
	imageJars map[string][]string
	faults    map[string]Faults // by "<namespace>/<app>"
	loads     map[string]Load   // by "<namespace>/<app>"
	started   int

	requests requestCounter
	served   servedTimes
}

type clusterKey struct{ namespace, service string }

type cluster struct {
	namespace, app, hash string
	image                string
	jm                   *JobManager // nil while no jobmanager pod is Ready
	host                 string      // "<name>/<uid>" of the pod the JobManager process runs in
	// topic is the Load's topic while no JobManager reads it, for the next one to carry on with.
	topic *loadRun
}

// NewFleet prepares a Fleet; call Run to start watching pods.
func NewFleet(kube kubernetes.Interface, opts FleetOptions) *Fleet {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Fleet{
		kube: kube, opts: opts, storage: NewStorage(), timeline: NewTimeline(),
		clusters: map[clusterKey]*cluster{}, imageJars: map[string][]string{}, faults: map[string]Faults{},
		loads: map[string]Load{},
	}
}

// Timeline records the jobs of every JobManager of the Fleet, keyed "<namespace>/<app>".
func (f *Fleet) Timeline() *Timeline { return f.timeline }

// Storage is the file system shared by every JobManager of the Fleet.
func (f *Fleet) Storage() *Storage { return f.storage }

// Run starts a pod informer and returns once its cache has synced; the
// informer keeps running until ctx ends.
func (f *Fleet) Run(ctx context.Context) error {
	factory := informers.NewSharedInformerFactoryWithOptions(f.kube, 0,
		informers.WithNamespace(f.opts.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = LabelApp + "," + LabelAppHash + "," + LabelDeploymentType
		}))
	informer := factory.Core().V1().Pods().Informer()
	if err := informer.AddIndexers(cache.Indexers{clusterIndex: PodCluster}); err != nil {
		return err
	}
	f.mu.Lock()
	f.pods = informer.GetIndexer()
	f.mu.Unlock()
	onPod := func(obj any, deleted bool) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if pod, ok := obj.(*corev1.Pod); ok {
			gone := ""
			if deleted {
				gone = podIdentity(pod)
			}
			f.syncCluster(pod.Namespace, pod.Labels[LabelApp], pod.Labels[LabelAppHash], gone)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { onPod(obj, false) },
		UpdateFunc: func(_, obj any) { onPod(obj, false) },
		DeleteFunc: func(obj any) { onPod(obj, true) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		factory.Shutdown()
	}()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return fmt.Errorf("flinksim: pod informer did not sync: %w", ctx.Err())
	}
	return nil
}

// clusterIndex indexes pods by their Flink cluster: namespace, app and hash.
const clusterIndex = "flinksim-cluster"

// ClusterIndexKey is the key of one Flink cluster's pods in an index by PodCluster.
func ClusterIndexKey(namespace, app, hash string) string { return namespace + "/" + app + "/" + hash }

// PodCluster indexes a pod by the Flink cluster its operator labels name (namespace, app, hash):
// the simulator's fleet and the real-Flink fleet follow the operator's pods alike.
func PodCluster(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Labels[LabelApp] == "" || p.Labels[LabelAppHash] == "" {
		return nil, nil
	}
	return []string{ClusterIndexKey(p.Namespace, p.Labels[LabelApp], p.Labels[LabelAppHash])}, nil
}

func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podIdentity tells pod incarnations apart, even a pod recreated under the same name.
func podIdentity(p *corev1.Pod) string {
	return p.Name + "/" + string(p.UID)
}

// syncCluster recomputes one cluster from its pods: JobManager up or down, and
// the number of TaskManagers. gone names a pod incarnation known to be deleted.
func (f *Fleet) syncCluster(namespace, app, hash, gone string) {
	if app == "" || hash == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	objs, err := f.pods.ByIndex(clusterIndex, ClusterIndexKey(namespace, app, hash))
	if err != nil {
		return
	}
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, obj := range objs {
		if p, ok := obj.(*corev1.Pod); ok {
			pods = append(pods, p)
		}
	}
	key := clusterKey{namespace, app + "-" + hash}
	c := f.clusters[key]
	if c == nil {
		c = &cluster{namespace: namespace, app: app, hash: hash}
		f.clusters[key] = c
	}
	var jmPod *corev1.Pod
	readyTMs, hostReady := 0, false
	for _, p := range pods {
		if !podReady(p) {
			continue
		}
		switch p.Labels[LabelDeploymentType] {
		case RoleJobManager:
			hostReady = hostReady || podIdentity(p) == c.host
			if jmPod == nil || p.CreationTimestamp.Before(&jmPod.CreationTimestamp) ||
				(p.CreationTimestamp.Equal(&jmPod.CreationTimestamp) && p.Name < jmPod.Name) {
				jmPod = p
			}
		case RoleTaskManager:
			readyTMs++
		}
	}
	// The JobManager process dies with its pod, even if another jobmanager pod
	// of the cluster is Ready: that one starts a new process. The cache may
	// already hold the pod's replacement when the deletion is handled, and a
	// replacement under the same name looks the same where the API server sets
	// no UID (fake clientsets), so the deletion itself ends the process.
	if c.jm != nil && (!hostReady || c.host == gone) {
		f.logf("flinksim: %s/%s: jobmanager pod gone or not ready; JobManager %s ended", namespace, key.service, c.jm.Name())
		c.jm.stop()
		c.topic = c.jm.handOverLoad()
		c.jm = nil
	}
	switch {
	case jmPod != nil && c.jm == nil:
		f.startJobManager(c, jmPod, readyTMs)
	case jmPod != nil:
		c.jm.SetTaskManagers(readyTMs)
	}
}

func (f *Fleet) startJobManager(c *cluster, pod *corev1.Pod, taskManagers int) {
	var config map[string]string
	version := ""
	for _, ctr := range pod.Spec.Containers {
		if ctr.Name == jobManagerContainer {
			c.image = ctr.Image
			for _, env := range ctr.Env {
				switch env.Name {
				case flinkPropertiesEnv:
					config = ParseFlinkProperties(env.Value)
				case flinkVersionEnv:
					version = env.Value
				}
			}
		}
	}
	var jars []string
	if j, ok := f.imageJars[c.image]; ok {
		jars = append([]string{}, j...)
	}
	c.host = podIdentity(pod)
	if id := haClusterID(config, c.app+"-"+c.hash); id != "" {
		f.writeHAConfigMap(c.namespace, id, version)
	}
	c.jm = NewJobManager(Options{
		Clock: f.opts.Clock, Name: pod.Name, FlinkConfig: config, Jars: jars,
		TaskManagers: taskManagers, Timings: f.opts.Timings,
		Timeline: f.timeline, AppKey: c.namespace + "/" + c.app, Storage: f.storage,
		Seed: f.opts.Seed + int64(f.started), FlinkVersion: version,
		haScope: c.namespace, haClusterID: c.app + "-" + c.hash,
	})
	f.started++
	c.jm.SetFaults(f.faults[c.namespace+"/"+c.app])
	f.startLoad(c)
	f.logf("flinksim: %s/%s-%s: JobManager %s up with %d taskmanagers", c.namespace, c.app, c.hash, pod.Name, taskManagers)
}

// Labels of the ConfigMaps of Flink's Kubernetes HA services.
const (
	haConfigMapTypeLabel = "configmap-type"
	haConfigMapType      = "high-availability"
	haClusterIDLabel     = "app"
)

// writeHAConfigMap plays a JobManager with Kubernetes HA starting: it writes its leader address to
// "<cluster id>-cluster-config-map", creating it with Flink's labels: app and type, and on Flink 1.x
// configmap-type=high-availability too (real 2.3.0 writes no configmap-type). The ConfigMap holds the
// pointers to the cluster's HA data, so a JobManager that starts without it finds none: the HA
// store of the cluster id is dropped, and nothing is recovered. (Flink also keeps a
// "<cluster id>-<job id>-config-map" per job until the job is terminal; that is not modelled.)
func (f *Fleet) writeHAConfigMap(namespace, clusterID, version string) {
	ctx := context.Background()
	cms := f.kube.CoreV1().ConfigMaps(namespace)
	name := clusterID + "-cluster-config-map"
	_, err := cms.Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return
	}
	if !apierrors.IsNotFound(err) {
		f.logf("flinksim: %s/%s: reading HA ConfigMap: %v", namespace, name, err)
		return
	}
	f.storage.haForget(namespace + "/" + clusterID)
	labels := map[string]string{haClusterIDLabel: clusterID, "type": "flink-native-kubernetes"}
	if !flinkAtLeast(version, 2, 0) {
		labels[haConfigMapTypeLabel] = haConfigMapType
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels}}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		f.logf("flinksim: %s/%s: creating HA ConfigMap: %v", namespace, name, err)
	}
}

// ParseFlinkProperties reads FLINK_PROPERTIES: one "key: value" per line.
func ParseFlinkProperties(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, found := strings.Cut(line, ":")
		if !found {
			continue
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out
}

func (f *Fleet) logf(format string, args ...any) {
	if f.opts.Logf != nil {
		f.opts.Logf(format, args...)
	}
}

// JobManager returns the running JobManager of the cluster behind a versioned
// service "<app>-<hash>", or nil while it is down.
func (f *Fleet) JobManager(namespace, service string) *JobManager {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.clusters[clusterKey{namespace, service}]; c != nil {
		return c.jm
	}
	return nil
}

// SetImageJars declares that an image bundles only these jars; current and
// future JobManagers whose jobmanager container runs that image see only them.
// Images not declared bundle every jar.
func (f *Fleet) SetImageJars(image string, jars []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.imageJars[image] = append([]string{}, jars...)
	for _, c := range f.clusters {
		if c.jm != nil && c.image == image {
			c.jm.setImageJars(jars)
		}
	}
}

// SetFaults applies faults to the current and future JobManagers of an app.
func (f *Fleet) SetFaults(namespace, app string, faults Faults) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[namespace+"/"+app] = faults.clone()
	for _, c := range f.clusters {
		if c.namespace == namespace && c.app == app && c.jm != nil {
			c.jm.SetFaults(faults)
		}
	}
}

// SetLoad gives an app's jobs a Load (see JobManager.SetLoad): those its current and future
// JobManagers run from now on. The topic outlives a JobManager, as a Kafka topic does: the next
// one of the cluster reads on from where the last one stopped, the records that arrived between
// them waiting. A Load without vertices ends it.
func (f *Fleet) SetLoad(namespace, app string, l Load) error {
	if _, err := l.compile(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := namespace + "/" + app
	f.loads[key] = l
	for _, c := range f.clusters {
		if c.namespace == namespace && c.app == app {
			c.topic = nil
			if c.jm != nil {
				f.startLoad(c)
			}
		}
	}
	return nil
}

// SetInput changes the input of an app's Load from now on (JobManager.SetInput): its current
// JobManagers' jobs keep reading their topic, now arriving at the new rate, and so does the next
// JobManager of a cluster that has none now. A JobManager that starts a new topic later starts it
// with the new input.
func (f *Fleet) SetInput(namespace, app string, input Rate) error {
	if input.err != nil {
		return fmt.Errorf("input: %w", input.err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key := namespace + "/" + app
	l, ok := f.loads[key]
	if !ok || len(l.Vertices) == 0 {
		return fmt.Errorf("%s has no Load to change the input of", key)
	}
	l.Input = input
	f.loads[key] = l
	for _, c := range f.clusters {
		if c.namespace != namespace || c.app != app {
			continue
		}
		if r := c.topic; r != nil {
			// Nothing reads it meanwhile; what arrived until now arrived at the old rate.
			if now := f.opts.Clock.Now(); now.After(r.at) {
				r.integrate(r.at.Sub(r.origin), now.Sub(r.origin), 0)
				r.at = now
			}
			r.spec.input = input
		}
		if c.jm != nil {
			if err := c.jm.SetInput(input); err != nil {
				return err
			}
		}
	}
	return nil
}

// startLoad gives a cluster's new JobManager the app's Load: the topic its last JobManager read,
// or a new one.
func (f *Fleet) startLoad(c *cluster) {
	if c.topic != nil {
		c.jm.takeOverLoad(c.topic)
		c.topic = nil
		return
	}
	_ = c.jm.SetLoad(f.loads[c.namespace+"/"+c.app]) // checked by Fleet.SetLoad
}

// CrashJobManager restarts a cluster's JobManager process at once (see
// JobManager.Crash): it stays reachable, and without HA has lost every job.
// It reports whether the JobManager was up.
func (f *Fleet) CrashJobManager(namespace, service string) bool {
	jm := f.JobManager(namespace, service)
	if jm == nil {
		return false
	}
	f.logf("flinksim: %s/%s: JobManager %s crashed", namespace, service, jm.Name())
	jm.Crash()
	return true
}

// RestartJobManager restarts a cluster's JobManager process in its pod, as an
// OOMKill does (see JobManager.Restart). It reports whether the JobManager was up.
func (f *Fleet) RestartJobManager(namespace, service string) bool {
	jm := f.JobManager(namespace, service)
	if jm == nil {
		return false
	}
	f.logf("flinksim: %s/%s: JobManager %s restarting", namespace, service, jm.Name())
	jm.Restart()
	return true
}

// ServeHTTP routes /{namespace}/{service}/<flink path> to the cluster's
// JobManager. A cluster that is down drops the connection, as a refused
// connection would look to an HTTP client.
func (f *Fleet) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(req.URL.Path, "/"), "/", 3)
	if len(parts) < 2 {
		dropConnection(w)
		return
	}
	rest := "/"
	if len(parts) == 3 {
		rest += parts[2]
	}
	defer func(start time.Time) { f.served.observe(time.Since(start)) }(time.Now())
	f.requests.add(parts[0], parts[1], req.Method, rest)
	jm := f.JobManager(parts[0], parts[1])
	if jm == nil {
		dropConnection(w)
		return
	}
	inner := req.Clone(req.Context())
	inner.URL.Path = rest
	inner.URL.RawPath = ""
	inner.RequestURI = inner.URL.RequestURI()
	jm.Handler().ServeHTTP(w, inner)
}
