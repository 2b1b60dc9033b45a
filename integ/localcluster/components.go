//go:build linux

package localcluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// component describes how to run and check one binary.
type component struct {
	name  string
	tier  int                        // components in higher tiers depend on lower ones
	ports int                        // loopback ports it needs
	args  func(ports []int) []string // command line for the given ports
	env   []string                   // extra environment
	reset func(ports []int) error    // optional: clean state left by a failed attempt
	ready probe                      // optional: nil means "running and listening" is enough
	addr  func(ports []int) string   // for progress lines
}

const maxPortAttempts = 5

// startComponent runs comp until it is ready, choosing fresh ports again when another process
// took one of them first.
func (c *Cluster) startComponent(ctx context.Context, comp component) (*process, []int, error) {
	var lastErr error
	for attempt := 1; attempt <= maxPortAttempts; attempt++ {
		ports, err := c.pickPorts(comp.ports)
		if err != nil {
			return nil, nil, err
		}
		if comp.reset != nil {
			if err := comp.reset(ports); err != nil {
				return nil, nil, fmt.Errorf("preparing %s: %w", comp.name, err)
			}
		}
		where := ""
		if comp.addr != nil {
			where = " on " + comp.addr(ports)
		}
		c.logf("starting %s%s", comp.name, where)
		began := time.Now()
		p, err := c.spawn(comp.name, comp.tier, comp.args(ports), comp.env)
		if err != nil {
			return nil, nil, err
		}
		err = waitReady(ctx, p, ports, comp.ready)
		if err == nil {
			if comp.ports > 0 || comp.ready != nil {
				c.logf("%s ready after %s", comp.name, time.Since(began).Round(10*time.Millisecond))
			}
			return p, ports, nil
		}
		if p.exited() && p.logContains("address already in use") {
			c.logf("%s lost a port race, retrying on other ports", comp.name)
			lastErr = err
			continue
		}
		return nil, nil, err
	}
	return nil, nil, fmt.Errorf("%s: no free ports after %d attempts: %w", comp.name, maxPortAttempts, lastErr)
}

// waitReady polls until p listens on all ports and passes ready, p exits, or ctx ends.
func waitReady(ctx context.Context, p *process, ports []int, ready probe) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		if p.exited() {
			return p.exitError()
		}
		if listensOn(p.pid(), ports) {
			if ready == nil {
				return nil
			}
			if lastErr = ready(ctx, ports); lastErr == nil {
				if p.exited() { // the answer came from someone else
					return p.exitError()
				}
				return nil
			}
		} else {
			lastErr = errors.New("not listening yet")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last check: %v)\n--- last lines of %s ---\n%s",
				p.name, ctx.Err(), lastErr, p.logPath, p.logTail(40))
		case <-p.done:
		case <-tick.C:
		}
	}
}

func loopback(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

func (c *Cluster) etcd() component {
	return component{
		name:  "etcd",
		ports: 2, // client, peer
		addr:  func(p []int) string { return loopback(p[0]) },
		reset: func([]int) error { return removeAll(c.etcdDataDir()) },
		args: func(p []int) []string {
			client, peer := "http://"+loopback(p[0]), "http://"+loopback(p[1])
			return []string{
				"--name=flinkfsm",
				"--data-dir=" + c.etcdDataDir(),
				"--listen-client-urls=" + client,
				"--advertise-client-urls=" + client,
				"--listen-peer-urls=" + peer,
				"--initial-advertise-peer-urls=" + peer,
				"--initial-cluster=flinkfsm=" + peer,
				"--unsafe-no-fsync", // test data is thrown away; fsync only slows every write
				fmt.Sprintf("--quota-backend-bytes=%d", c.size.EtcdQuotaBytes),
				"--log-level=warn",
			}
		},
		ready: httpProbe(nil, "", func(p []int) string { return "http://" + loopback(p[0]) + "/health" }),
	}
}

func (c *Cluster) etcdDataDir() string { return c.etcdData }

// chooseEtcdDataDir puts etcd's data in memory (/dev/shm) where the machine lets us write there
// and the cluster is sized for it (Sizing.EtcdInMemory), else under dir. The data is thrown away
// with the cluster, and on disk each of etcd's writes also costs the kernel's writeback: seconds
// of CPU taken from the control plane on a busy 2-core machine, and more in one run than the
// next, which blurs what make bench measures.
func chooseEtcdDataDir(dir string, inMemory bool) string {
	if !inMemory {
		return filepath.Join(dir, "etcd-data")
	}
	if probe, err := os.MkdirTemp(sharedMemory, "flinkfsm-probe-"); err == nil {
		_ = os.Remove(probe)
		abs, _ := filepath.Abs(dir) // two checkouts' ".local" must not share one etcd
		sum := sha256.Sum256([]byte(abs))
		return filepath.Join(sharedMemory, "flinkfsm-etcd-"+hex.EncodeToString(sum[:6]))
	}
	return filepath.Join(dir, "etcd-data")
}

// sharedMemory is Linux's memory-backed file system.
const sharedMemory = "/dev/shm"

// dropMemoryData frees the memory etcd's data takes, once etcd has stopped.
func (c *Cluster) dropMemoryData() error {
	if dir := c.etcdDataDir(); strings.HasPrefix(dir, sharedMemory+"/") {
		return removeAll(dir)
	}
	return nil
}

func (c *Cluster) apiserver(etcdPort int) component {
	return component{
		name:  "kube-apiserver",
		tier:  1,
		ports: 1,
		addr:  func(p []int) string { return loopback(p[0]) },
		args: func(p []int) []string {
			return []string{
				"--etcd-servers=http://" + loopback(etcdPort),
				"--bind-address=127.0.0.1",
				fmt.Sprintf("--secure-port=%d", p[0]),
				"--tls-cert-file=" + c.creds.servingCert,
				"--tls-private-key-file=" + c.creds.servingKey,
				"--cert-dir=" + filepath.Join(c.Dir, "certs", "kube-apiserver"),
				"--service-account-key-file=" + c.creds.saPublicKey,
				"--service-account-signing-key-file=" + c.creds.saPrivateKey,
				"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
				"--token-auth-file=" + c.creds.tokenFile,
				"--authorization-mode=RBAC",
				"--service-cluster-ip-range=" + c.size.ServiceCIDR,
				"--allow-privileged=true",
				"--etcd-compaction-interval=" + c.size.CompactionInterval.String(),
				"--event-ttl=" + c.size.EventTTL.String(),
				// Without kubelets no token controller feeds pods; tests need not wait for default
				// service accounts in fresh namespaces.
				"--disable-admission-plugins=ServiceAccount",
				// /debug/pprof, for finding where the API server's time goes under make bench:
				// kubectl get --raw '/debug/pprof/profile?seconds=15'. It costs nothing unless asked.
				"--profiling=true",
			}
		},
		ready: httpProbe(c.caPool, c.creds.token, func(p []int) string {
			return "https://" + loopback(p[0]) + "/readyz"
		}),
	}
}

func (c *Cluster) controllerManager() component {
	return component{
		name:  "kube-controller-manager",
		tier:  2,
		ports: 1,
		addr:  func(p []int) string { return loopback(p[0]) },
		args: func(p []int) []string {
			return []string{
				"--kubeconfig=" + c.KubeconfigPath,
				"--leader-elect=false",
				// node-lifecycle must stay: it lifts the not-ready taint every new node carries.
				"--controllers=*,-nodeipam,-serviceaccount-token",
				"--use-service-account-credentials=false",
				"--service-account-private-key-file=" + c.creds.saPrivateKey,
				"--root-ca-file=" + c.creds.caFile,
				"--bind-address=127.0.0.1",
				fmt.Sprintf("--secure-port=%d", p[0]),
				"--cert-dir=" + filepath.Join(c.Dir, "certs", "kube-controller-manager"),
				fmt.Sprintf("--kube-api-qps=%d", c.size.ControllerQPS),
				fmt.Sprintf("--kube-api-burst=%d", c.size.ControllerBurst),
				"--concurrent-deployment-syncs=10",
				"--concurrent-replicaset-syncs=10",
				"--concurrent-gc-syncs=40",
				"--concurrent-namespace-syncs=10",
				// kwok renews leases; a generous grace keeps a busy 2-core machine from marking
				// nodes NotReady and flipping every pod to unready.
				"--node-monitor-grace-period=120s",
				"--node-monitor-period=2s",
				"--profiling=false",
			}
		},
		ready: httpProbe(nil, "", func(p []int) string { return "https://" + loopback(p[0]) + "/healthz" }),
	}
}

func (c *Cluster) scheduler() component {
	return component{
		name:  "kube-scheduler",
		tier:  2,
		ports: 1,
		addr:  func(p []int) string { return loopback(p[0]) },
		args: func(p []int) []string {
			return []string{
				"--kubeconfig=" + c.KubeconfigPath,
				"--leader-elect=false",
				"--bind-address=127.0.0.1",
				fmt.Sprintf("--secure-port=%d", p[0]),
				"--cert-dir=" + filepath.Join(c.Dir, "certs", "kube-scheduler"),
				fmt.Sprintf("--kube-api-qps=%d", c.size.SchedulerQPS),
				fmt.Sprintf("--kube-api-burst=%d", c.size.SchedulerBurst),
				"--profiling=false",
			}
		},
		// /readyz also waits for the scheduler's informers to sync.
		ready: httpProbe(nil, "", func(p []int) string { return "https://" + loopback(p[0]) + "/readyz" }),
	}
}

// kwok serves no port; it is ready once the nodes it manages are (see waitForNodes).
func (c *Cluster) kwok() component {
	return component{
		name: "kwok",
		tier: 2,
		args: func([]int) []string {
			return []string{
				"--kubeconfig=" + c.KubeconfigPath,
				"--manage-all-nodes=false",
				"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
				"--cidr=" + c.size.PodCIDR,
				"--node-ip=" + nodeIP,
				// Without leases the node-lifecycle controller marks every node NotReady after
				// about 40 s and kwok never recovers the pods.
				"--node-lease-duration-seconds=40",
			}
		},
		env: []string{
			"KUBE_FEATURE_WatchListClient=false",
			// kwok loads ~/.kwok/kwok.yaml when present; a private HOME keeps the user's out.
			"HOME=" + filepath.Join(c.Dir, "kwok-home"),
		},
	}
}

func removeAll(dir string) error {
	if strings.TrimSpace(dir) == "" || dir == "/" {
		return fmt.Errorf("refusing to remove %q", dir)
	}
	return os.RemoveAll(dir)
}
