//go:build linux

package localcluster

import (
	"net"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// clusterShape is one application's largest footprint: during a Dual update two clusters of a
// JobManager and 3 TaskManagers at Lyft's default resources, and 3 Services.
var clusterShape = struct {
	clusters, pods, services int64
	cpu, memoryGi            int64
}{clusters: 2, pods: 4, services: 3, cpu: 4 + 3*2, memoryGi: 3 + 3*1}

func TestSizedForTwoThousandApplications(t *testing.T) {
	apps := int64(SizedForApplications)
	if apps < 2000 {
		t.Fatalf("SizedForApplications = %d, issue 12 asks for 2,000", apps)
	}
	if got, want := addresses(t, serviceCIDR), apps*clusterShape.services+1; got < want {
		t.Errorf("service range %s holds %d addresses, %d applications need %d", serviceCIDR, got, apps, want)
	}
	pods := apps * clusterShape.clusters * clusterShape.pods
	if got := addresses(t, podCIDR); got < pods {
		t.Errorf("pod range %s holds %d addresses, %d applications need %d", podCIDR, got, apps, pods)
	}
	_, services, _ := net.ParseCIDR(serviceCIDR)
	_, podNet, _ := net.ParseCIDR(podCIDR)
	if services.Contains(podNet.IP) || podNet.Contains(services.IP) {
		t.Errorf("pod range %s overlaps service range %s", podCIDR, serviceCIDR)
	}
	if ip := net.ParseIP(nodeIP); services.Contains(ip) || podNet.Contains(ip) {
		t.Errorf("node IP %s lies in the service or pod range", nodeIP)
	}
	if !services.Contains(serviceIP) || serviceIP.String() != "10.0.0.1" {
		t.Errorf("serviceIP %s is not the first address of %s", serviceIP, serviceCIDR)
	}
	// One node alone must hold them all: tests may start a single node.
	for _, c := range []struct {
		name     string
		capacity string
		need     int64
	}{
		{"cpu", nodeCPU, apps * clusterShape.clusters * clusterShape.cpu},
		{"memory", nodeMemory, apps * clusterShape.clusters * clusterShape.memoryGi << 30},
		{"pods", nodePods, pods},
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
