// Package operator wires the controller to a Kubernetes API server: clients, event recording, the
// Flink REST client, metrics, and the controller loop.
package operator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
	appscheme "github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/scheme"
	"github.com/flinkfsm/flinkfsm/pkg/controller/checkpointbook"
	"github.com/flinkfsm/flinkfsm/pkg/controller/config"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flinkapplication"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jars"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// Component is the name the operator's Events carry as their source.
const Component = "flinkfsm"

// Run runs the operator until ctx ends.
func Run(ctx context.Context, restConfig *rest.Config, cfg *config.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := klog.FromContext(ctx)
	if restConfig.QPS == 0 && cfg.KubeAPIQPS > 0 {
		// client-go's default of 5 requests a second throttles an operator running many applications
		// long before the API server would.
		restConfig.QPS, restConfig.Burst = cfg.KubeAPIQPS, cfg.KubeAPIBurst
	}
	kube, err := kubernetes.NewForConfig(protobufFor(restConfig))
	if err != nil {
		return err
	}
	apps, err := versioned.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	if err := crdsInstalled(ctx, apps, cfg.Namespaces()); err != nil {
		return err
	}
	resolve, err := cfg.URLResolver(restConfig.Host)
	if err != nil {
		return err
	}
	shard, err := cfg.Shard()
	if err != nil {
		return err
	}
	_ = appscheme.AddToScheme(scheme.Scheme)
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(newParallelSink(ctx, &typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")}))
	defer broadcaster.Shutdown()

	registry, reg := newRegistry(cfg.MetricNamePrefix())
	useWorkqueueMetrics(reg)
	useKubeClientMetrics(reg)
	flinkClientConfig := client.DefaultConfig()
	// A JobManager is called by at most as many passes at once as there are workers (a session
	// cluster's jobs share it), and is polled again within a statusPollInterval: keep that many
	// connections to it, open past its next poll, instead of dialling every call.
	flinkClientConfig.IdleConnectionsPerJobManager = cfg.WorkerCount()
	flinkClientConfig.IdleTimeout = max(90*time.Second, 2*cfg.StatusPollInterval.Duration)
	if cfg.FlinkURLMode == config.URLModeAPIServerProxy {
		// Through the API server's service proxy, the JobManagers are reached with the operator's own
		// TLS trust and credentials, not anonymously.
		if flinkClientConfig.Transport, err = rest.TransportFor(restConfig); err != nil {
			return fmt.Errorf("operator.flinkUrlMode APIServerProxy: %w", err)
		}
	}
	env := &flinkapplication.Environment{Environment: kindpass.Environment{
		Kube: kube, Apps: apps, FlinkURL: resolve, Clock: clock.RealClock{}, Config: cfg, Shard: shard,
		Flink:    client.New(flinkClientConfig, reg),
		Recorder: broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: Component}),
		Metrics:  kindpass.NewMetrics(reg),
	}}
	if cfg.CheckpointBookInterval.Duration > 0 {
		// The book writes only while this replica surely leads: a frozen leader's late flush could
		// otherwise put back an older checkpoint than the new leader recorded.
		env.Book = checkpointbook.New(kube, func() error {
			if env.Acting != nil {
				return env.Acting()
			}
			return nil
		})
	}
	if env.Jars, err = jars.NewFetcher(jars.Policy{
		AllowHTTP: cfg.Jars.AllowHTTP, AllowedHosts: cfg.Jars.AllowedHosts, AllowedNetworks: cfg.Jars.AllowedNetworks,
		MaxBytes: cfg.Jars.MaxBytes, Timeout: cfg.Jars.Timeout.Duration, Dir: cfg.Jars.Dir, Concurrency: cfg.Jars.Concurrency,
	}); err != nil {
		return fmt.Errorf("operator.jars: %w", err)
	}
	if n, err := env.Jars.RemoveLeftovers(); err != nil {
		return fmt.Errorf("operator.jars.dir: removing jars an earlier process left: %w", err)
	} else if n > 0 {
		log.Info("removed jars an earlier process left unfinished", "count", n, "dir", cfg.Jars.Dir)
	}
	ctrl := NewController(env)

	reg.MustRegister(ctrl.Collector())
	st := &state{ctrl: ctrl}
	if !cfg.LeaderElection.Enabled {
		st.acting.Store(true)
	}
	replicaMetrics(reg, st)
	shardMetric(reg, cfg)
	srv, addr, err := serveMetrics(cfg.MetricsAddress, registry, st, cfg.Profiling)
	if err != nil {
		return err
	}
	defer srv.Close()
	log.Info("flinkfsm operator started", "namespaces", cfg.Namespaces(), "shardSelector", cfg.ShardSelector, "metrics", addr,
		"workers", cfg.WorkerCount())
	if !cfg.LeaderElection.Enabled {
		return ctrl.Run(ctx)
	}
	le := cfg.LeaderElection
	le.LeaseName = cfg.LeaseName()
	if cfg.LeaderElection.LeaseName == "" && le.LeaseName != config.DefaultLeaseName {
		if err := waitForUnshardedLeader(ctx, kube, leaseNamespace(le), le, clock.RealClock{}); err != nil {
			return err
		}
	}
	return runElected(ctx, kube, le, func(ctx context.Context, acting func() error) error {
		env.Acting = acting
		st.acting.Store(true)
		defer st.acting.Store(false)
		return ctrl.Run(ctx)
	})
}

// protobufFor is restConfig speaking protobuf, for Kubernetes' own kinds. The API server
// already encodes every Pod, Deployment and Service for its controllers in protobuf and keeps that
// encoding per object; a JSON watcher makes it encode each change a second time, and JSON costs the
// API server, at 100 applications deploying at once, more CPU to decode and encode than protobuf.
// Custom resources only speak JSON, so the clients of our own kinds keep restConfig as it is.
func protobufFor(restConfig *rest.Config) *rest.Config {
	c := rest.CopyConfig(restConfig)
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return c
}

// state is what the probes report: whether this replica acts (leads, or runs alone) and how its
// controller does.
type state struct {
	acting atomic.Bool
	ctrl   interface {
		Healthy() error
		Stalled() error
	}
}

// live is /healthz: the process works, unless it acts and work waits that no worker takes. A
// standby is alive: it only waits for the lease.
func (s *state) live() (string, error) {
	if !s.acting.Load() {
		return "ok (standby)", nil
	}
	return "ok", s.ctrl.Stalled()
}

// ready is /readyz: an acting replica whose caches synced and whose workers move, or a standby.
func (s *state) ready() (string, error) {
	if !s.acting.Load() {
		return "ok (standby)", nil
	}
	return "ok (leading)", s.ctrl.Healthy()
}

func serveMetrics(addr string, metrics prometheus.Gatherer, st *state, profiling bool) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("metrics server: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(metrics, promhttp.HandlerOpts{}))
	mux.Handle("/healthz", probe(st.live))
	mux.Handle("/readyz", probe(st.ready))
	if profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.Error(err, "metrics server stopped")
		}
	}()
	return srv, ln.Addr().String(), nil
}

// probe answers 200 with what check says, or 500 with why not.
func probe(check func() (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		ok, err := check()
		if err != nil {
			http.Error(w, "unhealthy: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte(ok))
	}
}

// crdsInstalled fails at once, naming the kind, when a CRD the operator watches is not installed:
// its informer would never sync and the operator would wait without saying why.
func crdsInstalled(ctx context.Context, apps versioned.Interface, namespaces []string) error {
	ns := metav1.NamespaceAll
	if len(namespaces) > 0 {
		ns = namespaces[0]
	}
	one := metav1.ListOptions{Limit: 1}
	v1 := apps.FlinkV1beta1()
	for kind, list := range map[string]func() error{
		"FlinkApplication":    func() error { _, err := v1.FlinkApplications(ns).List(ctx, one); return err },
		"FlinkSessionCluster": func() error { _, err := v1.FlinkSessionClusters(ns).List(ctx, one); return err },
		"FlinkSessionJob":     func() error { _, err := v1.FlinkSessionJobs(ns).List(ctx, one); return err },
	} {
		if err := list(); apierrors.IsNotFound(err) {
			return fmt.Errorf("the %s CRD is not installed (apply deploy/crd): %w", kind, err)
		}
	}
	return nil
}
