//go:build linux

package localcluster

import (
	"fmt"
	"math/bits"
	"net"
	"time"
)

// The cluster is sized for a number of FlinkApplications (Options.Applications): by default the
// 2,000 of issue 12's `make bench`, and `make bench N=...` sizes it for its N. Each application
// owns 2 Services (3 during an update or as BlueGreen) and, in its default shape, a JobManager
// (4 CPU, 3 GiB) and TaskManagers (2 CPU, 1 GiB each); during a Dual update it owns two such
// clusters at once. sizing_test.go checks sizeFor against these numbers. Up to 2,000 applications
// the ranges, the nodes' pods and CPUs, etcd's quota, compaction, the events' TTL and the
// controllers' budget are what the cluster always had; beyond, each grows with the count.
const (
	// SizedForApplications is how many applications a cluster is sized for when Options does not
	// say.
	SizedForApplications = 2000

	// MaxApplications is the most Options.Applications may ask for: the pod range may grow to a
	// /14 (262,142 addresses, 8 a application) before it would reach nodeIP.
	MaxApplications = 32767

	// serviceBase is where the service range starts; its first address is the `kubernetes`
	// Service's. The range grows from a /16 (65,534 addresses, where a /24 held only ~250
	// applications) to at most the /12 the API server accepts.
	serviceBase = "10.0.0.0"
	// podBase is where kwok takes pod IPs from, a /16 that grows to a /14. It must not overlap
	// the service range, or a pod could get the IP of a Service (the `kubernetes` Service's
	// among them).
	podBase = "10.244.0.0"
	// nodeIP is the InternalIP of every kwok node, outside both ranges.
	nodeIP = "10.240.0.1"

	// etcdInMemoryUpTo is the most applications whose etcd data is kept in memory.
	etcdInMemoryUpTo = 3000

	// defaultNodes is how many kwok nodes a cluster gets. Each node's capacity holds every
	// application alone, so a test that asks for one node fits too; more nodes would only add
	// kwok's leases and node heartbeats.
	defaultNodes = 3
)

// Per application: its largest footprint (a Dual update: two clusters of a JobManager and 3
// TaskManagers, and 3 Services).
const (
	servicesPerApp = 3
	podsPerApp     = 2 * 4
)

// Sizing is what the local cluster is made to hold: its address ranges, its nodes, and the
// settings of etcd, the API server and the controllers that grow with the applications it runs.
// Cluster.Sizing reports the one a cluster was started with.
type Sizing struct {
	Applications int `json:"applications"`

	ServiceCIDR string `json:"serviceCIDR"`
	PodCIDR     string `json:"podCIDR"`

	Nodes int `json:"nodes"`
	// Per node: one node holds 20 pods, 50 CPUs and 50 GiB a application, over twice the
	// footprint above.
	NodeCPU    string `json:"nodeCPU"`
	NodeMemory string `json:"nodeMemory"`
	NodePods   string `json:"nodePods"`

	// EtcdInMemory puts etcd's data in /dev/shm where the machine has it (see chooseEtcdDataDir),
	// up to etcdInMemoryUpTo applications. There it is memory nothing can reclaim: 726 MiB at
	// 1,000 applications (a 360 MiB database, write-ahead log segments of 64 MiB), which at
	// 10,000 would be gigabytes of a machine whose control plane needs most of its memory
	// already. On disk it is page cache, which the kernel can drop.
	EtcdInMemory bool `json:"etcdInMemory"`
	// EtcdQuotaBytes is etcd's --quota-backend-bytes: beyond it etcd refuses every write
	// ("mvcc: database space exceeded"). Its default is 2 GiB; the cluster gives 512 KiB an
	// application, at least that: the database measured 246 MiB at 2,000 applications (a floor, a
	// fleet created at once and its steady state, compacted every minute) and 360 MiB at 1,000
	// (compacted every 5 minutes). etcd warns above 8 GiB, which is 16,384 applications.
	EtcdQuotaBytes int64 `json:"etcdQuotaBytes"`
	// CompactionInterval is the API server's --etcd-compaction-interval: etcd keeps every
	// revision until then, and a fleet created at once writes its objects several times each.
	CompactionInterval time.Duration `json:"etcdCompactionInterval"`
	// EventTTL is the API server's --event-ttl: each application leaves about 20 Events
	// (Kubernetes' and the operator's) in etcd and in the API server's memory until then.
	EventTTL time.Duration `json:"eventTTL"`

	// ControllerQPS and ControllerBurst are kube-controller-manager's --kube-api-qps and burst, a
	// budget of each of its controllers; SchedulerQPS and SchedulerBurst are kube-scheduler's,
	// whose binds of every pod share it (its default is 50 / 100). A client-side limit is not
	// what the floor should measure.
	ControllerQPS   int `json:"controllerQPS"`
	ControllerBurst int `json:"controllerBurst"`
	SchedulerQPS    int `json:"schedulerQPS"`
	SchedulerBurst  int `json:"schedulerBurst"`
}

// sizeFor is the Sizing for apps applications (SizedForApplications when 0). Every value is at
// least the one for SizedForApplications.
func sizeFor(apps int) (Sizing, error) {
	if apps <= 0 {
		apps = SizedForApplications
	}
	if apps > MaxApplications {
		return Sizing{}, fmt.Errorf("the local cluster holds at most %d applications, not %d", MaxApplications, apps)
	}
	scale := max(apps, SizedForApplications) // every value is at least the 2,000 applications' one
	s := Sizing{
		Applications: apps,
		// The API server's own Services (`kubernetes`) and a test's beside the applications.
		ServiceCIDR:    fmt.Sprintf("%s/%d", serviceBase, prefixFor(servicesPerApp*scale+256, 16, 12)),
		PodCIDR:        fmt.Sprintf("%s/%d", podBase, prefixFor(podsPerApp*scale, 16, 14)),
		Nodes:          defaultNodes,
		NodeCPU:        fmt.Sprint(50 * scale),
		NodeMemory:     fmt.Sprintf("%dGi", 50*scale),
		NodePods:       fmt.Sprint(20 * scale),
		EtcdInMemory:   apps <= etcdInMemoryUpTo,
		EtcdQuotaBytes: max(2<<30, int64(scale)<<19),
		CompactionInterval: clampDuration(5*time.Minute*SizedForApplications/time.Duration(scale),
			time.Minute, 5*time.Minute),
		EventTTL:        clampDuration(time.Hour*SizedForApplications/time.Duration(scale), 10*time.Minute, time.Hour),
		ControllerQPS:   scale / 10,
		ControllerBurst: scale / 5,
		SchedulerQPS:    scale / 10,
		SchedulerBurst:  scale / 5,
	}
	return s, nil
}

// prefixFor is the longest prefix (at most longest, at least shortest) whose IPv4 range holds
// addresses usable addresses besides its network and broadcast addresses.
func prefixFor(addresses, longest, shortest int) int {
	hostBits := bits.Len(uint(addresses + 1)) // 2^hostBits ≥ addresses + 2
	return max(shortest, min(longest, 32-hostBits))
}

func clampDuration(d, lo, hi time.Duration) time.Duration {
	return max(lo, min(hi, d.Round(time.Minute)))
}

// serviceIP is the first address of the service range: the API server gives it to the
// `kubernetes` Service, so the serving certificate must name it. Every range starts at
// serviceBase, so it is the same whatever the size.
var serviceIP = firstAddress(serviceBase + "/16")

func firstAddress(cidr string) net.IP {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		panic(err) // a constant above is malformed
	}
	ip := n.IP.To4()
	first := make(net.IP, len(ip))
	copy(first, ip)
	first[len(first)-1]++
	return first
}
