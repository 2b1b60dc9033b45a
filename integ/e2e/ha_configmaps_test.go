package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// Each update of an application with Flink's Kubernetes HA runs a new cluster under a new cluster
// id, whose JobManager writes HA ConfigMaps of its own (the simulator's Fleet does, with Flink's
// labels). After ten updates only the running cluster's are left, and none once the application is
// deleted.
func TestHAConfigMapsDoNotPileUpAcrossUpdates(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	app := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) {
		checkpointing(spec)
		spec.FlinkConfig["high-availability.type"] = "kubernetes"
		spec.FlinkConfig["high-availability.storageDir"] = "file:///flink/ha"
	})
	only := func(a *v1beta1.FlinkApplication) []string {
		return []string{flink.HAClusterIDOf(a.Name, a.Status.DeployHash) + "-cluster-config-map"}
	}
	s.eventually("the first cluster's HA ConfigMap", s.haConfigMapsAre(only(app)))
	for i := 2; i <= 11; i++ {
		s.update(app.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = fmt.Sprintf("flinkfsm.test/wordcount:v%d", i) })
		app = s.waitRunning(app.Name, app.Status.DeployHash)
	}
	s.eventually("only the running cluster's HA ConfigMaps after ten updates", s.haConfigMapsAre(only(app)))

	if err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Delete(s.ctx, app.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitGone(app.Name)
	s.eventually("no HA ConfigMap once the application is gone", s.haConfigMapsAre(nil))
}

// haConfigMapsAre checks that the scenario's namespace holds exactly these HA ConfigMaps.
func (s *scenario) haConfigMapsAre(want []string) func() (bool, string) {
	return func() (bool, string) {
		cms, err := env.Kube.CoreV1().ConfigMaps(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: flink.HAConfigMapSelector})
		if err != nil {
			return false, err.Error()
		}
		var have []string
		for _, cm := range cms.Items {
			have = append(have, cm.Name)
		}
		sort.Strings(have)
		return strings.Join(have, ",") == strings.Join(want, ","), fmt.Sprintf("HA ConfigMaps %v, want %v", have, want)
	}
}
