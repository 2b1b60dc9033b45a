package crdtest

import (
	"context"
	"math"
	"strings"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

// exampleOf is the example manifest of the kind: the wordcount application, or the session example's
// cluster and job.
func exampleOf(t *testing.T, kind string) map[string]interface{} {
	t.Helper()
	switch kind {
	case "FlinkSessionCluster":
		return sessionExample(t, kind, "shared")
	case "FlinkSessionJob":
		return sessionExample(t, kind, "wordcount")
	}
	return readObject(t, "examples/wordcount.yaml")
}

// The API server does not enforce `format: int32`. An int32 field without bounds stores any integer
// up to int64, and an object holding 4294967296 then decodes in no Go client: the operator's list of
// every namespace failed with it. Every int32 of every kind, the embedded Kubernetes types' too,
// must be bounded within an int32.
func TestEveryInt32FieldIsBoundedByItsType(t *testing.T) {
	for kind := range CRDPaths {
		var walk func(s *structuralschema.Structural, path string)
		walk = func(s *structuralschema.Structural, path string) {
			if s == nil {
				return
			}
			if s.Type == "integer" && s.ValueValidation != nil && s.ValueValidation.Format == "int32" {
				v := s.ValueValidation
				if v.Minimum == nil || *v.Minimum < math.MinInt32 || v.Maximum == nil || *v.Maximum > math.MaxInt32 {
					t.Errorf("%s %s is an int32 without int32 bounds (minimum %v, maximum %v)", kind, path, v.Minimum, v.Maximum)
				}
			}
			for name, p := range s.Properties {
				walk(&p, path+"."+name)
			}
			walk(s.Items, path+"[*]")
			if s.AdditionalProperties != nil {
				walk(s.AdditionalProperties.Structural, path+"[*]")
			}
		}
		walk(crdFor(t, kind).Structural, "")
	}
}

// Integers that would not decode into their Go field are refused at apply time, naming the field.
func TestIntegersPastTheirGoTypeAreRefused(t *testing.T) {
	const past32 = int64(1) << 32
	tests := []struct {
		kind, name string
		edit       edit
		wantField  string
		wantDetail string
	}{
		{"FlinkApplication", "parallelism 4294967296", set(past32, "spec", "parallelism"), "spec.parallelism", "less than or equal to 32768"},
		{"FlinkApplication", "parallelism past Flink's maximum", set(int64(32769), "spec", "parallelism"), "spec.parallelism", "less than or equal to 32768"},
		{"FlinkApplication", "taskSlots past int32", set(past32, "spec", "taskManagerConfig", "taskSlots"), "spec.taskManagerConfig.taskSlots", "less than or equal to 2147483647"},
		{"FlinkApplication", "jobManager replicas past int32", set(past32, "spec", "jobManagerConfig", "replicas"), "spec.jobManagerConfig.replicas", "less than or equal to 2147483647"},
		{"FlinkApplication", "readinessTimeoutSeconds past int32", set(past32, "spec", "readinessTimeoutSeconds"), "spec.readinessTimeoutSeconds", "less than or equal to 2147483647"},
		{"FlinkApplication", "maxCheckpointRestoreAgeSeconds past int32", set(past32, "spec", "maxCheckpointRestoreAgeSeconds"), "spec.maxCheckpointRestoreAgeSeconds", "less than or equal to 2147483647"},
		{"FlinkApplication", "blueGreen minCheckpoints past its bound", set(past32, "spec", "blueGreen", "minCheckpoints"), "spec.blueGreen.minCheckpoints", "less than or equal to 1000"},
		{"FlinkApplication", "a volume's defaultMode past int32",
			set([]interface{}{map[string]interface{}{"name": "s", "secret": map[string]interface{}{"secretName": "s", "defaultMode": past32}}}, "spec", "volumes"),
			"spec.volumes[0].secret.defaultMode", "less than or equal to 2147483647"},
		{"FlinkApplication", "an affinity weight below int32",
			set([]interface{}{map[string]interface{}{"weight": -past32, "preference": map[string]interface{}{}}},
				"spec", "taskManagerConfig", "affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution"),
			"spec.taskManagerConfig.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight", "greater than or equal to -2147483648"},
		// A number past int64 reaches the validator as a float, which is no integer.
		{"FlinkApplication", "runAsUser past int64", set(1e19, "spec", "securityContext", "runAsUser"), "spec.securityContext.runAsUser", "must be of type integer"},
		{"FlinkSessionCluster", "TaskManager replicas past int32", set(past32, "spec", "taskManagerConfig", "replicas"), "spec.taskManagerConfig.replicas", "less than or equal to 2147483647"},
		{"FlinkSessionCluster", "more task slots than an int32 counts", set(int64(math.MaxInt32), "spec", "taskManagerConfig", "replicas"),
			"spec.taskManagerConfig.replicas", "replicas × taskSlots, the cluster's task slots, must be at most 2147483647"},
		{"FlinkSessionJob", "parallelism 4294967296", set(past32, "spec", "job", "parallelism"), "spec.job.parallelism", "less than or equal to 32768"},
	}
	for _, tt := range tests {
		t.Run(tt.kind+" "+tt.name, func(t *testing.T) {
			r := crdFor(t, tt.kind).Create(context.Background(), edited(exampleOf(t, tt.kind), tt.edit))
			checkRefused(t, r.Errs, tt.wantField, tt.wantDetail)
		})
	}
}

// A status that would not decode is refused too: the status subresource is written by whoever may,
// and one undecodable status would hide the object from the operator.
func TestStatusIntegersPastInt32AreRefused(t *testing.T) {
	crd := flinkCRD(t)
	old := storedWordcount(t)
	r := crd.UpdateStatus(context.Background(), edited(old, set(int64(1)<<31, "status", "retryCount")), old)
	checkRefused(t, r.Errs, "status.retryCount", "less than or equal to 2147483647")
	r = crd.UpdateStatus(context.Background(), edited(old, set(int64(1)<<31, "status", "jobStatus", "jobRestartCount")), old)
	checkRefused(t, r.Errs, "status.jobStatus.jobRestartCount", "less than or equal to 2147483647")
}

// The operator names a cluster's objects after the resource: <name>-<hash> and <name> Services,
// <name>-blue/-green for BlueGreen, <name>-<hash>-jm/-tm Deployments. A Service name is a DNS-1035
// label of at most 63 characters, so a name the API server would refuse for them is refused at
// apply time instead of at every retry of a deploy.
func TestNamesTheOperatorCannotDeriveServicesFromAreRefused(t *testing.T) {
	tooLong := "a" + strings.Repeat("b", 54) // 55 characters
	tests := []struct{ name, value, wantDetail string }{
		{"longer than 54 characters", tooLong, "metadata.name must be at most 54 characters"},
		{"with a dot", "word.count", "metadata.name must be a DNS-1035 label"},
		{"starting with a digit", "1wordcount", "metadata.name must be a DNS-1035 label"},
	}
	for _, kind := range []string{"FlinkApplication", "FlinkSessionCluster"} {
		for _, tt := range tests {
			t.Run(kind+" "+tt.name, func(t *testing.T) {
				r := crdFor(t, kind).Create(context.Background(), edited(exampleOf(t, kind), set(tt.value, "metadata", "name")))
				// A rule on metadata.name can only sit at the root, which the server prints as <nil>;
				// the message names the field.
				checkRefused(t, r.Errs, "<nil>", tt.wantDetail)
			})
		}
		t.Run(kind+" of 54 characters", func(t *testing.T) {
			name := "a" + strings.Repeat("b", 53)
			if r := crdFor(t, kind).Create(context.Background(), edited(exampleOf(t, kind), set(name, "metadata", "name"))); len(r.Errs) > 0 {
				t.Errorf("refused:\n%v", r.Errs.ToAggregate())
			}
			// The longest Service name the operator derives from it fits.
			if svc := flink.VersionedServiceName(&v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Name: name}}, "0123abcd"); len(svc) > 63 {
				t.Errorf("Service %s is %d characters", svc, len(svc))
			}
		})
	}
}

// Nonsense that would render a cluster that cannot work is refused at apply time where CEL can
// express it; what CEL cannot read (flinkConfig) is refused by the operator before deploy.
func TestNonsenseThatRendersWrongIsRefused(t *testing.T) {
	memory := func(component, q string) edit {
		return set(map[string]interface{}{"requests": map[string]interface{}{"memory": q}}, "spec", component, "resources")
	}
	tests := []struct {
		kind, name string
		edit       edit
		wantField  string
		wantDetail string
	}{
		{"FlinkApplication", "TaskManager memory of one byte", memory("taskManagerConfig", "1"),
			"spec.taskManagerConfig.resources", "leaves Flink less than 1Mi"},
		{"FlinkApplication", "JobManager memory as an integer", set(map[string]interface{}{"limits": map[string]interface{}{"memory": int64(1000)}},
			"spec", "jobManagerConfig", "resources"), "spec.jobManagerConfig.resources", "leaves Flink less than 1Mi"},
		{"FlinkApplication", "a fraction that leaves nothing", func(obj map[string]interface{}) {
			memory("jobManagerConfig", "1Gi")(obj)
			set(0.9999999999, "spec", "jobManagerConfig", "systemMemoryFraction")(obj)
		}, "spec.jobManagerConfig.resources", "leaves Flink less than 1Mi"},
		{"FlinkSessionCluster", "TaskManager memory of one kilobyte", memory("taskManagerConfig", "1k"),
			"spec.taskManagerConfig.resources", "leaves Flink less than 1Mi"},
		{"FlinkApplication", "image with an uppercase repository", set("Flink:1.20", "spec", "image"), "spec.image", "image must be a container image reference"},
		{"FlinkApplication", "image with a space", set("flink 1.20", "spec", "image"), "spec.image", "image must be a container image reference"},
		{"FlinkApplication", "image as a URL", set("https://registry.example.com/flink:1.20", "spec", "image"), "spec.image", "image must be a container image reference"},
		{"FlinkSessionCluster", "image with an empty tag", set("flink:", "spec", "image"), "spec.image", "image must be a container image reference"},
	}
	for _, tt := range tests {
		t.Run(tt.kind+" "+tt.name, func(t *testing.T) {
			r := crdFor(t, tt.kind).Create(context.Background(), edited(exampleOf(t, tt.kind), tt.edit))
			checkRefused(t, r.Errs, tt.wantField, tt.wantDetail)
		})
	}
}

func TestSensibleValuesNearTheBoundsAreAdmitted(t *testing.T) {
	memory := func(q string) edit {
		return set(map[string]interface{}{"requests": map[string]interface{}{"memory": q}}, "spec", "taskManagerConfig", "resources")
	}
	tests := []struct {
		kind, name string
		edit       edit
	}{
		{"FlinkApplication", "parallelism 32768", set(int64(32768), "spec", "parallelism")},
		{"FlinkApplication", "2Mi of memory", memory("2Mi")},
		{"FlinkApplication", "memory limit only", set(map[string]interface{}{"limits": map[string]interface{}{"memory": "1Gi"}}, "spec", "taskManagerConfig", "resources")},
		{"FlinkApplication", "CPU only", set(map[string]interface{}{"requests": map[string]interface{}{"cpu": "1"}}, "spec", "taskManagerConfig", "resources")},
		{"FlinkApplication", "image with registry port, path and tag", set("registry.example.com:5000/team/flink-job:1.20.1-scala_2.12", "spec", "image")},
		{"FlinkApplication", "image by digest", set("ghcr.io/flinkfsm/job@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "spec", "image")},
		{"FlinkSessionCluster", "a thousand TaskManagers of 64 slots", func(obj map[string]interface{}) {
			set(int64(1000), "spec", "taskManagerConfig", "replicas")(obj)
			set(int64(64), "spec", "taskManagerConfig", "taskSlots")(obj)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.kind+" "+tt.name, func(t *testing.T) {
			if r := crdFor(t, tt.kind).Create(context.Background(), edited(exampleOf(t, tt.kind), tt.edit)); len(r.Errs) > 0 {
				t.Errorf("refused:\n%v", r.Errs.ToAggregate())
			}
		})
	}
}

// The CEL rule on spec.image and the operator's own check are the same pattern.
func TestImageRuleIsTheOperatorsPattern(t *testing.T) {
	for _, kind := range []string{"FlinkApplication", "FlinkSessionCluster"} {
		image := crdFor(t, kind).Structural.Properties["spec"].Properties["image"]
		found := false
		for _, rule := range image.XValidations {
			found = found || rule.Rule == "self.matches('"+flink.ImageReferencePattern+"')"
		}
		if !found {
			t.Errorf("%s spec.image has no rule matching flink.ImageReferencePattern", kind)
		}
	}
}
