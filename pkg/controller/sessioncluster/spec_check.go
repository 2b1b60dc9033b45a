package sessioncluster

import (
	"strings"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/clusters"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/lifecycle"
)

// specError names the first field of the spec that cannot deploy. Its replicas × taskSlots must be
// a task slot count Flink can hold, and its cluster must render. The CRD's schema and CEL rules
// refuse most nonsense at apply time; this catches what CEL cannot read (flinkConfig) and objects
// stored before a rule existed.
func specError(p *Pass) error {
	if err := clusters.SlotsFit(p.ClusterOwner); err != nil {
		return err
	}
	_, err := p.ClusterOwner.RenderCluster(p.Hash, "")
	return err
}

// podPolicyError applies the pod policy its Namespace's annotations set (clusters.PodPolicy). It is
// read at each deploy, not each pass, through the Namespace cache.
func podPolicyError(p *Pass) error {
	return lifecycle.StepError(p.PodPolicy.Check(p, p.Meta.Namespace, p.ClusterOwner))
}

// createCluster creates whatever of the Flink cluster with this hash does not exist yet, rendered
// from owner (lifecycle.Pass.CreateCluster).
func createCluster(p *Pass, owner flink.ClusterOwner, hash string) error {
	return p.CreateCluster(owner, hash, v1beta1.FlinkApplicationVersion(""))
}

// jobNames lists jobs by name for a message.
func jobNames(jobs []*v1beta1.FlinkSessionJob) string {
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Name
	}
	return strings.Join(names, ", ")
}
