//go:build linux

package localcluster

import (
	"net"
)

// The cluster is sized for `make bench` at 2,000 FlinkApplications, the most issue 12 asks of it.
// Each application owns 2 Services (3 during an update or as BlueGreen) and, in its default shape,
// a JobManager (4 CPU, 3 GiB) and TaskManagers (2 CPU, 1 GiB each); during a Dual update it owns
// two such clusters at once. sizing_test.go checks the constants below against these numbers.
const (
	// SizedForApplications is how many applications the address ranges and the nodes admit.
	SizedForApplications = 2000

	// serviceCIDR holds every ClusterIP Service: 65,534 addresses, where a /24 held only ~250
	// applications.
	serviceCIDR = "10.0.0.0/16"
	// podCIDR is where kwok takes pod IPs from. It must not overlap serviceCIDR, or a pod could
	// get the IP of a Service (the `kubernetes` Service's among them).
	podCIDR = "10.244.0.0/16"
	// nodeIP is the InternalIP of every kwok node, outside both ranges above.
	nodeIP = "10.240.0.1"

	// Per fake node; 3 nodes by default. 2,000 applications × 2 clusters of a JobManager and 3
	// TaskManagers need 40,000 CPU, 24,000 GiB and 16,000 pods: they fit on one node alone, so a
	// test that asks for a single node fits too, and kwok's IPs (65,536) are not exhausted.
	nodeCPU    = "100000"
	nodeMemory = "100Ti"
	nodePods   = "40000"
)

// serviceIP is the first address of serviceCIDR: the API server gives it to the `kubernetes`
// Service, so the serving certificate must name it.
var serviceIP = firstAddress(serviceCIDR)

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
