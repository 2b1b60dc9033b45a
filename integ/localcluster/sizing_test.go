//go:build linux

package localcluster

import (
	"net"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// clusterShape is one application's largest footprint: during a Dual update two clusters of a
// JobManager and 3 TaskManagers at Lyft's default resources, and 3 Services.
var clusterShape = struct {
	clusters, pods, services int64
	cpu, memoryGi            int64
}{clusters: 2, pods: 4, services: 3, cpu: 4 + 3*2, memoryGi: 3 + 3*1}

func TestSizedForApplications(t *testing.T) {
	for _, apps := range []int{0, 100, 1000, SizedForApplications, 5000, 10000, 21000, 25000, MaxApplications} {
		size, err := sizeFor(apps)
		if err != nil {
			t.Fatalf("sizeFor(%d): %v", apps, err)
		}
		want := int64(apps)
		if apps == 0 {
			want = SizedForApplications
		}
		if int64(size.Applications) != want {
			t.Errorf("sizeFor(%d).Applications = %d, want %d", apps, size.Applications, want)
		}
		checkSizing(t, size)
	}
	if _, err := sizeFor(MaxApplications + 1); err == nil {
		t.Errorf("sizeFor(%d) sized a cluster beyond MaxApplications", MaxApplications+1)
	}
}

// Up to 2,000 applications the cluster is what it always was: the tests' clusters do not change.
func TestSizedLikeBeforeUpToTwoThousand(t *testing.T) {
	for _, apps := range []int{0, 1, 1000, SizedForApplications} {
		size, _ := sizeFor(apps)
		size.Applications = 0
		want := Sizing{ServiceCIDR: "10.0.0.0/16", PodCIDR: "10.244.0.0/16", Nodes: 3, NodeCPU: "100000",
			NodeMemory: "100000Gi", NodePods: "40000", EtcdInMemory: true, EtcdQuotaBytes: 2 << 30, CompactionInterval: 5 * time.Minute,
			EventTTL: time.Hour, ControllerQPS: 200, ControllerBurst: 400, SchedulerQPS: 200, SchedulerBurst: 400}
		if size != want {
			t.Errorf("sizeFor(%d) = %+v, want %+v", apps, size, want)
		}
	}
}

func TestSizedForTenThousand(t *testing.T) {
	size, err := sizeFor(10000)
	if err != nil {
		t.Fatal(err)
	}
	if size.ServiceCIDR != "10.0.0.0/16" || size.PodCIDR != "10.244.0.0/15" {
		t.Errorf("ranges %s and %s, want 10.0.0.0/16 (30,001 Services) and 10.244.0.0/15 (80,000 pods)", size.ServiceCIDR, size.PodCIDR)
	}
	if size.CompactionInterval != time.Minute || size.EventTTL != 12*time.Minute || size.ControllerQPS != 1000 ||
		size.SchedulerQPS != 1000 || size.EtcdInMemory {
		t.Errorf("sizeFor(10000) = %+v", size)
	}
}

func checkSizing(t *testing.T, size Sizing) {
	t.Helper()
	apps := int64(size.Applications)
	if got, want := addresses(t, size.ServiceCIDR), apps*clusterShape.services+1; got < want {
		t.Errorf("service range %s holds %d addresses, %d applications need %d", size.ServiceCIDR, got, apps, want)
	}
	if _, n, _ := net.ParseCIDR(size.ServiceCIDR); n != nil {
		if ones, _ := n.Mask.Size(); ones < 12 {
			t.Errorf("service range %s is wider than the API server's /12", size.ServiceCIDR)
		}
	}
	pods := apps * clusterShape.clusters * clusterShape.pods
	if got := addresses(t, size.PodCIDR); got < pods {
		t.Errorf("pod range %s holds %d addresses, %d applications need %d", size.PodCIDR, got, apps, pods)
	}
	_, services, _ := net.ParseCIDR(size.ServiceCIDR)
	_, podNet, _ := net.ParseCIDR(size.PodCIDR)
	if services.Contains(podNet.IP) || podNet.Contains(services.IP) {
		t.Errorf("pod range %s overlaps service range %s", size.PodCIDR, size.ServiceCIDR)
	}
	if podNet.IP.String() != podBase || services.IP.String() != serviceBase {
		t.Errorf("ranges %s and %s do not start at %s and %s: too wide for their base", size.PodCIDR, size.ServiceCIDR, podBase, serviceBase)
	}
	if ip := net.ParseIP(nodeIP); services.Contains(ip) || podNet.Contains(ip) {
		t.Errorf("node IP %s lies in the service or pod range", nodeIP)
	}
	if !services.Contains(serviceIP) || serviceIP.String() != "10.0.0.1" {
		t.Errorf("serviceIP %s is not the first address of %s", serviceIP, size.ServiceCIDR)
	}
	if size.EtcdQuotaBytes < apps<<19 {
		t.Errorf("etcd quota %d MiB for %d applications, want at least 512 KiB each", size.EtcdQuotaBytes>>20, apps)
	}
	// One node alone must hold them all: tests may start a single node.
	for _, c := range []struct {
		name     string
		capacity string
		need     int64
	}{
		{"cpu", size.NodeCPU, apps * clusterShape.clusters * clusterShape.cpu},
		{"memory", size.NodeMemory, apps * clusterShape.clusters * clusterShape.memoryGi << 30},
		{"pods", size.NodePods, pods},
	} {
		q := resource.MustParse(c.capacity)
		if got := q.Value(); got < c.need {
			t.Errorf("node %s capacity %s, %d applications need %d", c.name, c.capacity, apps, c.need)
		}
	}
}

func addresses(t *testing.T, cidr string) int64 {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		t.Fatal(err)
	}
	ones, bits := n.Mask.Size()
	return 1<<(bits-ones) - 2 // network and broadcast
}
