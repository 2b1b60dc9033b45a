package realflink

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
)

// Pod labels that identify a Flink cluster and a pod's role in it (those of flinksim.Fleet).
const (
	labelApp            = "flink-app"
	labelAppHash        = "flink-app-hash"
	labelDeploymentType = "flink-deployment-type"
	roleJobManager      = "jobmanager"
	roleTaskManager     = "taskmanager"
)

// Image is what a container image would hold, for the pods that run it: the Flink release, the
// image's own Flink configuration (its flink-conf.yaml, under FLINK_PROPERTIES), and files at paths
// of the image's file system (the job jar where Flink's jar endpoints look for it).
type Image struct {
	Dist Dist
	// Config is the image's configuration; the pod's FLINK_PROPERTIES is laid over it.
	Config map[string]string
	// Files maps a path in the image to the file on this machine that stands for it.
	Files map[string]string
}

// FleetOptions configure a Fleet.
type FleetOptions struct {
	// Namespace limits the pods followed; empty follows every namespace.
	Namespace string
	// Images are the images pods may run, by name; a pod of another image is not started (its
	// pod stays as the cluster reports it, and the fleet logs why).
	Images map[string]Image
	// Kubeconfig, when set, is given to every process as kubernetes.config.file, so that Flink's
	// Kubernetes HA runs against the API server the pods are on.
	Kubeconfig string
	// Dir holds every process's files: pods/<namespace>/<pod>/ and hostpath/ (hostPath volumes, as
	// on one node).
	Dir string
	// Java is the java binary ($JAVA_HOME/bin/java, else java on PATH, when empty).
	Java string
	// Logf receives one line per process started, ended or lost.
	Logf func(format string, args ...any)
}

// Fleet runs real Flink for the Flink clusters on a Kubernetes API whose pods never run (kwok
// nodes): for each JobManager and TaskManager pod, a JobManager or TaskManager process on loopback
// with the configuration the operator rendered for it, but for the addresses, ports and paths a pod
// would have had of its own. A pod deleted, or no longer Ready while its process runs, ends the
// process; a process that ends by itself is reported on its pod as the kubelet would, and started
// again as restartPolicy Always does. ServeHTTP gives the operator each cluster's REST API at
// /{namespace}/{service}/, as flinksim.Fleet does.
type Fleet struct {
	kube kubernetes.Interface
	opts FleetOptions

	mu       sync.Mutex
	pods     cache.Indexer
	clusters map[clusterKey]*fleetCluster
	closed   bool
	stats    memoryStats
}

type clusterKey struct{ namespace, service string }

// fleetCluster is one Flink cluster's processes: its pods' by pod identity.
type fleetCluster struct {
	namespace, app, hash string
	// ports are the JobManager's fixed ports, as its Service's are: every JobManager of the cluster
	// binds them, so that TaskManagers configured with them find the next one.
	ports     jobManagerPorts
	processes map[string]*podProcess
}

type jobManagerPorts struct{ rest, rpc, blob int }

// NewFleet prepares a Fleet; Run starts it.
func NewFleet(kube kubernetes.Interface, opts FleetOptions) *Fleet {
	f := &Fleet{kube: kube, opts: opts, clusters: map[clusterKey]*fleetCluster{}}
	f.opts.Java = javaBinary(opts.Java)
	return f
}

// Run follows the pods until ctx ends; it returns once its informer has synced. Stop ends every
// process.
func (f *Fleet) Run(ctx context.Context) error {
	if f.opts.Dir == "" {
		dir, err := os.MkdirTemp("", "flinkfsm-realfleet-")
		if err != nil {
			return err
		}
		f.opts.Dir = dir
	}
	factory := informers.NewSharedInformerFactoryWithOptions(f.kube, 0,
		informers.WithNamespace(f.opts.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labelApp + "," + labelAppHash + "," + labelDeploymentType
		}))
	informer := factory.Core().V1().Pods().Informer()
	if err := informer.AddIndexers(cache.Indexers{clusterIndex: flinksim.PodCluster}); err != nil {
		return err
	}
	f.mu.Lock()
	f.pods = informer.GetIndexer()
	f.mu.Unlock()
	onPod := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if pod, ok := obj.(*corev1.Pod); ok {
			f.syncCluster(pod.Namespace, pod.Labels[labelApp], pod.Labels[labelAppHash])
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    onPod,
		UpdateFunc: func(_, obj any) { onPod(obj) },
		DeleteFunc: onPod,
	}); err != nil {
		return err
	}
	f.stats.start(f.liveProcesses)
	factory.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		factory.Shutdown()
	}()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return fmt.Errorf("realflink: pod informer did not sync: %w", ctx.Err())
	}
	return nil
}

// Stop ends every process and starts no more.
func (f *Fleet) Stop() {
	f.mu.Lock()
	f.closed = true
	var all []*podProcess
	for _, c := range f.clusters {
		for _, p := range c.processes {
			all = append(all, p)
		}
	}
	f.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range all {
		wg.Add(1)
		go func(p *podProcess) { defer wg.Done(); p.end(5 * time.Second) }(p)
	}
	wg.Wait()
	f.stats.stop()
}

// Memory is what the fleet's processes held.
func (f *Fleet) Memory() Memory {
	f.stats.sample()
	f.stats.mu.Lock()
	defer f.stats.mu.Unlock()
	out := Memory{Now: f.stats.now, PeakTotal: f.stats.peakTotal, PeakPerProcess: map[string]int64{}}
	for k, v := range f.stats.peak {
		out.PeakPerProcess[k] = v
	}
	return out
}

func (f *Fleet) liveProcesses() []*process {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*process
	for _, c := range f.clusters {
		for _, p := range c.processes {
			if proc := p.current(); proc != nil {
				out = append(out, proc)
			}
		}
	}
	return out
}

const clusterIndex = "realflink-cluster"

// podIdentity tells pod incarnations apart, even a pod recreated under the same name.
func podIdentity(p *corev1.Pod) string { return p.Name + "/" + string(p.UID) }

// podRunning tells whether the pod runs on its node: scheduled, started and not being deleted.
// A pod the fleet itself reported as crashed counts as running: the kubelet restarts it.
func podRunning(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// syncCluster starts a process for every running pod of the cluster that has none, and ends the
// processes of pods deleted or made unready by anyone but the fleet. A TaskManager waits for its
// cluster's first JobManager, whose ports it is configured with.
func (f *Fleet) syncCluster(namespace, app, hash string) {
	if app == "" || hash == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	objs, err := f.pods.ByIndex(clusterIndex, flinksim.ClusterIndexKey(namespace, app, hash))
	if err != nil {
		return
	}
	key := clusterKey{namespace, app + "-" + hash}
	c := f.clusters[key]
	if c == nil {
		c = &fleetCluster{namespace: namespace, app: app, hash: hash, processes: map[string]*podProcess{}}
		f.clusters[key] = c
	}
	running := map[string]*corev1.Pod{}
	for _, obj := range objs {
		if p, ok := obj.(*corev1.Pod); ok && podRunning(p) {
			running[podIdentity(p)] = p
		}
	}
	for id, p := range c.processes {
		pod, ok := running[id]
		switch {
		case !ok:
			f.logf("realflink: %s/%s: pod gone; %s ends", namespace, p.pod, p.role)
			delete(c.processes, id)
			go p.end(5 * time.Second)
		case !podReady(pod) && p.up():
			if p.reportedDown() {
				continue
			}
			// Made unready by someone else (a node lost, a test): the container is lost with it.
			f.logf("realflink: %s/%s: pod not ready; %s killed", namespace, p.pod, p.role)
			go p.kill()
		}
	}
	ids := make([]string, 0, len(running))
	for id := range running {
		ids = append(ids, id)
	}
	sort.Strings(ids) // JobManagers first: "-jm-" sorts before "-tm-"
	for _, id := range ids {
		if _, ok := c.processes[id]; ok {
			continue
		}
		pod := running[id]
		role := pod.Labels[labelDeploymentType]
		if role == roleTaskManager && c.ports.rpc == 0 {
			continue // its JobManager's ports are not chosen yet
		}
		p, err := f.newPodProcess(c, pod)
		if err != nil {
			f.logf("realflink: %s/%s: not started: %v", namespace, pod.Name, err)
			continue
		}
		c.processes[id] = p
		go p.run()
	}
}

func (f *Fleet) logf(format string, args ...any) {
	if f.opts.Logf != nil {
		f.opts.Logf(format, args...)
	}
}

// JobManagerURL is the REST URL of the cluster's live JobManager behind the versioned service
// "<app>-<hash>", or "" while none is up.
func (f *Fleet) JobManagerURL(namespace, service string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.clusters[clusterKey{namespace, service}]
	if c == nil {
		return ""
	}
	var best *podProcess
	for _, p := range c.processes {
		if p.role == roleJobManager && p.up() && (best == nil || p.created.Before(best.created)) {
			best = p
		}
	}
	if best == nil {
		return ""
	}
	return best.restURL
}

// ServeHTTP routes /{namespace}/{service}/<flink path> to the cluster's JobManager. A cluster
// without one drops the connection, as a refused connection would look to the operator.
func (f *Fleet) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(req.URL.Path, "/"), "/", 3)
	if len(parts) < 2 {
		dropConnection(w)
		return
	}
	target := f.JobManagerURL(parts[0], parts[1])
	if target == "" {
		dropConnection(w)
		return
	}
	u, err := url.Parse(target)
	if err != nil {
		dropConnection(w)
		return
	}
	rest := "/"
	if len(parts) == 3 {
		rest += parts[2]
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.URL.Path, r.Out.URL.RawPath = rest, ""
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) { dropConnection(w) },
	}
	proxy.ServeHTTP(w, req)
}

func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	w.WriteHeader(http.StatusBadGateway)
}

// ListenAndServe serves the fleet's JobManagers at addr until ctx ends, and returns the address.
func (f *Fleet) ListenAndServe(ctx context.Context, addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return ln.Addr().String(), nil
}

// podDir is where a pod's files go.
func (f *Fleet) podDir(namespace, pod string) string {
	return filepath.Join(f.opts.Dir, "pods", namespace, pod)
}

// processesOf counts the live processes of an app's clusters.
func (f *Fleet) processesOf(namespace, app string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.clusters {
		if c.namespace != namespace || c.app != app {
			continue
		}
		for _, p := range c.processes {
			if p.up() {
				n++
			}
		}
	}
	return n
}
