package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A FlinkApplication the operator cannot decode (parallelism 4294967296, stored while the schema
// did not bound it) stops nothing but itself. Before, the typed informer's list failed on it for
// every namespace: no other application moved again, and /healthz said ok. Now another
// application, in another namespace, goes through an update promptly, both while the operator
// runs and after a restart lists everything again; the poison object gets a Warning Event saying
// why it is left alone, and /healthz stays ok.
func TestObjectThatDoesNotDecodeStopsNothingElse(t *testing.T) {
	defer stopEnvOnPanic()
	// Not parallel: it changes the shared CRD for a moment, and restarts the operator.
	t.Cleanup(func() { _ = env.StartOperator() }) // a no-op unless the test stopped half-way
	healthy, poisoned := newScenario(t), newScenario(t)
	app := healthy.createRunning("steady", nil)

	poisoned.createUndecodable("poison")

	// While the operator runs: its watch meets the object.
	healthy.update(app.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	app = healthy.waitRunning(app.Name, app.Status.DeployHash)

	// After a restart: its first list holds the object.
	env.KillOperator()
	if err := env.StartOperator(); err != nil {
		t.Fatalf("restarting the operator: %v", err)
	}
	healthy.update(app.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v3" })
	healthy.waitRunning(app.Name, app.Status.DeployHash)

	poisoned.eventually("a Warning Event on the object that does not decode", func() (bool, string) {
		for _, e := range poisoned.events("poison") {
			if e.Reason == "Undecodable" && e.Type == "Warning" && strings.Contains(e.Message, "4294967296") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("events: %v", poisoned.events("poison"))
	})
	if code, body := healthz(t); code != http.StatusOK {
		t.Errorf("/healthz answered %d %q with a poison object in the cluster", code, body)
	}
}

// createUndecodable stores a FlinkApplication whose parallelism no int32 holds, as an API server
// stored it before the schema bounded the field: the CRD is replaced for a moment by one without
// the bound, and restored before the test goes on (and when it ends, whatever happens).
func (s *scenario) createUndecodable(name string) {
	s.t.Helper()
	crds, err := apiextensions.NewForConfig(env.Cluster.RestConfig())
	if err != nil {
		s.t.Fatal(err)
	}
	const crdName = "flinkapplications.flink.k8s.io"
	parallelism := func(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.JSONSchemaProps {
		spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		p := spec.Properties["parallelism"]
		return &p
	}
	setParallelism := func(p apiextensionsv1.JSONSchemaProps) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			crd, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(s.ctx, crdName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			spec.Properties["parallelism"] = p
			crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
			_, err = crds.ApiextensionsV1().CustomResourceDefinitions().Update(s.ctx, crd, metav1.UpdateOptions{})
			return err
		})
	}
	crd, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(s.ctx, crdName, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	original := *parallelism(crd).DeepCopy()
	if original.Maximum == nil {
		s.t.Fatalf("the installed CRD does not bound spec.parallelism; nothing to bypass")
	}
	restore := func() {
		if err := setParallelism(original); err != nil {
			s.t.Errorf("restoring the FlinkApplication CRD: %v", err)
		}
	}
	s.t.Cleanup(restore)
	unbounded := *original.DeepCopy()
	unbounded.Maximum = nil
	if err := setParallelism(unbounded); err != nil {
		s.t.Fatalf("relaxing the FlinkApplication CRD: %v", err)
	}

	obj := map[string]interface{}{
		"apiVersion": v1beta1.SchemeGroupVersion.String(), "kind": "FlinkApplication",
		"metadata": map[string]interface{}{"name": name, "namespace": s.ns},
	}
	spec, err := json.Marshal(appSpec())
	if err != nil {
		s.t.Fatal(err)
	}
	var specMap map[string]interface{}
	_ = json.Unmarshal(spec, &specMap)
	specMap["parallelism"] = int64(1) << 32
	obj["spec"] = specMap
	body, _ := json.Marshal(obj)
	// The API server serves the relaxed schema once its CRD handler has caught up.
	s.eventually("the API server storing parallelism 4294967296", func() (bool, string) {
		err := env.Apps.FlinkV1beta1().RESTClient().Post().Namespace(s.ns).Resource("flinkapplications").
			Body(body).Do(s.ctx).Error()
		return err == nil, fmt.Sprint(err)
	})
	s.t.Cleanup(func() {
		_ = env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Delete(s.ctx, name, metav1.DeleteOptions{})
	})
	restore()
	// Bounded again: the same object is refused now, and the stored one stays.
	s.eventually("the restored CRD refusing parallelism 4294967296", func() (bool, string) {
		err := env.Apps.FlinkV1beta1().RESTClient().Post().Namespace(s.ns).Resource("flinkapplications").
			Body([]byte(strings.Replace(string(body), `"name":"`+name+`"`, `"name":"`+name+`-again"`, 1))).Do(s.ctx).Error()
		return err != nil && strings.Contains(err.Error(), "less than or equal to 32768"), fmt.Sprint(err)
	})
}

var metricsAddress = regexp.MustCompile(`"flinkfsm operator started".*metrics="([^"]+)"`)

// healthz asks the running operator's /healthz, at the address its last start logged.
func healthz(t *testing.T) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + operatorMetricsAddress(t) + "/healthz")
	if err != nil {
		t.Fatalf("/healthz: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// operatorMetricsAddress is where the running operator serves /metrics and its probes, as its
// last start logged.
func operatorMetricsAddress(t *testing.T) string {
	t.Helper()
	var addr string
	deadline := time.Now().Add(waitTimeout)
	for addr == "" {
		if m := metricsAddress.FindAllStringSubmatch(env.OperatorLog(), -1); len(m) > 0 {
			addr = m[len(m)-1][1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the operator log names no metrics address")
		} else {
			time.Sleep(pollInterval)
		}
	}
	return addr
}
