//go:build linux

package localcluster

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Options configure Start. The zero value is usable.
type Options struct {
	// BinDir holds etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and
	// kwok. Default: $FLINKFSM_K8S_BIN, else the build cache, else whatever
	// hack/build-k8s-binaries.sh builds.
	BinDir string
	// Dir receives certificates, etcd data, logs and the kubeconfig. Default: a new temporary
	// directory. Stop leaves it in place so logs can be read after a failure.
	Dir string
	// Nodes is the number of kwok nodes; default 3.
	Nodes int
	// Applications is how many FlinkApplications the cluster is sized for (see Sizing): its
	// address ranges, node capacity, etcd quota and the controllers' budgets. Default
	// SizedForApplications, at most MaxApplications.
	Applications int
	// Log receives one line per start-up step; nil discards them.
	Log io.Writer

	pickPorts func(n int) ([]int, error) // tests force port clashes through this
}

// DefaultStartTimeout bounds Start when ctx has no deadline; building the binaries is not counted.
const DefaultStartTimeout = 3 * time.Minute

// stopGrace is how long components get to exit after SIGTERM before they are killed.
const stopGrace = 5 * time.Second

// Cluster is a running control plane. Its methods are safe for concurrent use.
type Cluster struct {
	// Dir is the work directory (see Options.Dir).
	Dir string
	// KubeconfigPath is an admin kubeconfig usable by kubectl and client-go.
	KubeconfigPath string
	// Server is the API server URL, https://127.0.0.1:PORT.
	Server string

	binDir    string
	log       io.Writer
	pickPorts func(n int) ([]int, error)
	creds     *credentials
	caPool    *x509.CertPool
	spawner   *spawner
	etcdData  string
	size      Sizing

	mu       sync.Mutex
	procs    []*process // every process ever started, including failed attempts
	stopped  bool
	stopErr  error
	stopOnce sync.Once
}

// Start brings up etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok, and
// returns once every fake node is Ready and untainted, so Deployments schedule immediately. On
// failure everything started is stopped and the error carries the end of the failing
// component's log.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	size, err := sizeFor(opts.Applications)
	if err != nil {
		return nil, err
	}
	binDir, err := resolveBinDir(ctx, opts.BinDir, log)
	if err != nil {
		return nil, err
	}
	if opts.Nodes <= 0 {
		opts.Nodes = size.Nodes
	}
	size.Nodes = opts.Nodes
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "flinkfsm-cluster-"); err != nil {
			return nil, err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return nil, err
	}
	creds, err := writeCredentials(filepath.Join(dir, "pki"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(creds.caPEM)

	c := &Cluster{
		Dir:            dir,
		KubeconfigPath: filepath.Join(dir, "kubeconfig"),
		binDir:         binDir,
		log:            log,
		creds:          creds,
		caPool:         pool,
		spawner:        newSpawner(),
		pickPorts:      opts.pickPorts,
		etcdData:       chooseEtcdDataDir(dir, size.EtcdInMemory),
		size:           size,
	}
	if c.pickPorts == nil {
		c.pickPorts = freePorts
	}
	if _, hasDeadline := ctx.Deadline(); !hasDeadline {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultStartTimeout)
		defer cancel()
	}
	c.logf("sized for %d applications: services %s, pods %s, %d nodes of %s pods, etcd data in %s, quota %d MiB, "+
		"compaction every %s, events kept %s, controllers' and scheduler's QPS %d and %d",
		size.Applications, size.ServiceCIDR, size.PodCIDR, size.Nodes, size.NodePods, c.etcdData, size.EtcdQuotaBytes>>20,
		size.CompactionInterval, size.EventTTL, size.ControllerQPS, size.SchedulerQPS)
	began := time.Now()
	if err := c.bringUp(ctx, opts.Nodes); err != nil {
		if stopErr := c.Stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		return nil, fmt.Errorf("starting local cluster in %s: %w", dir, err)
	}
	c.logf("cluster ready in %s; kubeconfig %s", time.Since(began).Round(10*time.Millisecond), c.KubeconfigPath)
	return c, nil
}

func (c *Cluster) bringUp(ctx context.Context, nodes int) error {
	_, etcdPorts, err := c.startComponent(ctx, c.etcd())
	if err != nil {
		return err
	}
	_, apiPorts, err := c.startComponent(ctx, c.apiserver(etcdPorts[0]))
	if err != nil {
		return err
	}
	c.Server = "https://" + loopback(apiPorts[0])
	if err := writeKubeconfig(c.KubeconfigPath, c.Server, c.creds.caPEM, c.creds.token); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(c.RestConfig())
	if err != nil {
		return err
	}
	// Nodes first: kwok then finds them on its initial list instead of via a later watch event.
	if err := createNodes(ctx, client, nodes, c.size); err != nil {
		return err
	}
	// The rest only need the API server, so they start together: on two cores this saves seconds.
	// The first failure cancels the others, whose "context canceled" would only bury its log.
	groupCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		failOnce sync.Once
		firstErr error
	)
	for _, comp := range []component{c.controllerManager(), c.scheduler(), c.kwok()} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := c.startComponent(groupCtx, comp); err != nil {
				failOnce.Do(func() { firstErr = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	began := time.Now()
	if err := waitForNodes(ctx, client, nodes, c.checkAlive); err != nil {
		return err
	}
	c.logf("%d kwok nodes schedulable after %s", nodes, time.Since(began).Round(10*time.Millisecond))
	return nil
}

func (c *Cluster) spawn(name string, tier int, args, env []string) (*process, error) {
	c.mu.Lock()
	stopped := c.stopped
	c.mu.Unlock()
	if stopped {
		return nil, errors.New("cluster is stopped")
	}
	p, err := c.spawner.start(name, tier, filepath.Join(c.binDir, name), args, env, filepath.Join(c.LogDir(), name+".log"))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return p, nil
}

// checkAlive reports the first component that exited although nothing asked it to. Processes of
// attempts abandoned after a port race are expected to be gone and are skipped.
func (c *Cluster) checkAlive() error {
	latest := map[string]*process{}
	for _, p := range c.processes() {
		latest[p.name] = p
	}
	for _, p := range latest {
		if p.exited() {
			return p.exitError()
		}
	}
	return nil
}

func (c *Cluster) processes() []*process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*process(nil), c.procs...)
}

// Stop terminates every process the cluster started (each whole process group), SIGKILLing those
// still alive after a short grace period. It keeps Dir and the logs, and is safe to call twice.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		c.stopped = true
		c.mu.Unlock()
		began := time.Now()
		c.stopErr = errors.Join(stopAll(c.processes(), stopGrace, c.logf), c.dropMemoryData())
		c.spawner.close()
		c.logf("cluster stopped in %s; logs in %s", time.Since(began).Round(10*time.Millisecond), c.LogDir())
	})
	return c.stopErr
}

// RestConfig returns a fresh admin config (token auth, QPS 200, burst 400).
func (c *Cluster) RestConfig() *rest.Config {
	return adminRestConfig(c.Server, c.creds.caPEM, c.creds.token)
}

// Sizing is what the cluster was sized for.
func (c *Cluster) Sizing() Sizing { return c.size }

// PIDs are the process ids of the running components by name (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok), for a benchmark that reads their memory and CPU
// from /proc.
func (c *Cluster) PIDs() map[string]int {
	out := map[string]int{}
	for _, p := range c.processes() { // in start order: a retried component's last attempt wins
		if !p.exited() {
			out[p.name] = p.pid()
		}
	}
	return out
}

// EtcdDataDir is where etcd keeps its data; under /dev/shm its files are memory.
func (c *Cluster) EtcdDataDir() string { return c.etcdDataDir() }

// LogDir holds one <component>.log per component.
func (c *Cluster) LogDir() string { return filepath.Join(c.Dir, "logs") }

// Kubectl runs the cached kubectl against this cluster.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, "kubectl"), append([]string{"--kubeconfig=" + c.KubeconfigPath}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if err != nil {
		err = fmt.Errorf("kubectl %v: %w: %s", args, err, errOut.String())
	}
	return out.String(), errOut.String(), err
}

func (c *Cluster) logf(format string, args ...any) {
	fmt.Fprintf(c.log, "[localcluster] "+format+"\n", args...)
}
