package crdtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The CRD as generated must be accepted by an API server at all; a CEL rule over the cost budget or
// a default that fails its own schema is refused at `kubectl apply -k deploy/`.
func TestCRDIsAcceptedByTheAPIServer(t *testing.T) {
	for kind := range CRDPaths {
		if errs := crdFor(t, kind).ValidateDefinition(context.Background()); len(errs) > 0 {
			t.Errorf("the API server would refuse the %s CRD:\n%v", kind, errs.ToAggregate())
		}
	}
}

// `kubectl apply` (client-side) stores the whole object as JSON in the last-applied-configuration
// annotation, and the API server caps all annotations at 256 KiB. The CRD embeds large core types
// (affinity, volumes), so growth is a real risk; past the cap `kubectl apply -k deploy/` fails and
// only --server-side works.
func TestCRDFitsClientSideApply(t *testing.T) {
	for kind, rel := range CRDPaths {
		j, err := utiljson.Marshal(readObject(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		if len(j) > apivalidation.TotalAnnotationSizeLimitB {
			t.Errorf("the %s CRD is %d bytes of JSON; kubectl apply cannot annotate more than %d", kind, len(j), apivalidation.TotalAnnotationSizeLimitB)
		}
	}
}

func TestWordcountExampleIsAdmittedAndDefaulted(t *testing.T) {
	r := flinkCRD(t).Create(context.Background(), readObject(t, "examples/wordcount.yaml"))
	if len(r.Errs) > 0 {
		t.Fatalf("refused:\n%v", r.Errs.ToAggregate())
	}
	if len(r.Pruned) > 0 {
		t.Errorf("fields the CRD does not know, dropped by the server: %v", r.Pruned)
	}
	spec := r.Object["spec"].(map[string]interface{})
	for field, want := range map[string]interface{}{
		"deploymentMode": "Dual", // defaulted
		"deleteMode":     "None", // set, not overwritten by the default Savepoint
		"parallelism":    int64(3),
	} {
		if spec[field] != want {
			t.Errorf("spec.%s = %v, want %v", field, spec[field], want)
		}
	}
	fraction := spec["flinkConfig"].(map[string]interface{})["taskmanager.network.memory.fraction"]
	if fraction != 0.1 {
		t.Errorf("flinkConfig keeps numbers as numbers: taskmanager.network.memory.fraction = %#v, want 0.1", fraction)
	}
}

// Every document of every example is admitted as it is written, by the CRD of its kind.
func TestExamplesAreAdmitted(t *testing.T) {
	files, err := filepath.Glob(repoFile(t, "examples/*.yaml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		rel := "examples/" + filepath.Base(f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range documents(data) {
			obj := parseObject(t, doc)
			kind, _ := obj["kind"].(string)
			if _, ok := CRDPaths[kind]; !ok {
				t.Errorf("%s document %d is a %q, which no CRD of flinkfsm defines", rel, i, kind)
				continue
			}
			r := crdFor(t, kind).Create(context.Background(), obj)
			if len(r.Errs) > 0 {
				t.Errorf("%s document %d (%s) refused:\n%v", rel, i, kind, r.Errs.ToAggregate())
			}
			if len(r.Pruned) > 0 {
				t.Errorf("%s document %d (%s): fields the CRD does not know, dropped by the server: %v", rel, i, kind, r.Pruned)
			}
		}
	}
}

func TestInvalidManifestsAreRefusedNamingTheField(t *testing.T) {
	tests := []struct {
		name       string
		edit       edit
		wantField  string
		wantDetail string
	}{
		{"parallelism 0", set(int64(0), "spec", "parallelism"), "spec.parallelism", "greater than or equal to 1"},
		{"parallelism missing", del("spec", "parallelism"), "spec.parallelism", "Required value"},
		{"unknown deleteMode", set("Later", "spec", "deleteMode"), "spec.deleteMode", `Unsupported value: "Later"`},
		{"image missing", del("spec", "image"), "spec.image", "Required value"},
		{"image empty", set("", "spec", "image"), "spec.image", "at least 1 chars long"},
		{"jarName missing", del("spec", "jarName"), "spec.jarName", "set one of them"},
		{"jarName and jarURI", set("local:///opt/flink/usrlib/job.jar", "spec", "jarURI"), "spec.jarName", "set one of them"},
		{"jarURI not local", func(o map[string]interface{}) {
			del("spec", "jarName")(o)
			set("https://example.com/job.jar", "spec", "jarURI")(o)
		}, "spec.jarURI", "local://"},
		{"jarURI relative", func(o map[string]interface{}) {
			del("spec", "jarName")(o)
			set("local://usrlib/job.jar", "spec", "jarURI")(o)
		}, "spec.jarURI", "absolute path"},
		{"jarURI climbing", func(o map[string]interface{}) {
			del("spec", "jarName")(o)
			set("local:///opt/../etc/job.jar", "spec", "jarURI")(o)
		}, "spec.jarURI", "absolute path"},
		{"jarURI with a newline", func(o map[string]interface{}) {
			del("spec", "jarName")(o)
			set("local:///opt/job\n.jar", "spec", "jarURI")(o)
		}, "spec.jarURI", "absolute path"},
		{"jarName empty", set("", "spec", "jarName"), "spec.jarName", "at least 1 chars long"},
		{"taskSlots 0", set(int64(0), "spec", "taskManagerConfig", "taskSlots"), "spec.taskManagerConfig.taskSlots", "greater than or equal to 1"},
		{"jobManager replicas 0", set(int64(0), "spec", "jobManagerConfig", "replicas"), "spec.jobManagerConfig.replicas", "greater than or equal to 1"},
		{"maxCheckpointRestoreAgeSeconds 0", set(int64(0), "spec", "maxCheckpointRestoreAgeSeconds"), "spec.maxCheckpointRestoreAgeSeconds", "greater than or equal to 1"},
		{"uiPort 70000", set(int64(70000), "spec", "uiPort"), "spec.uiPort", "less than or equal to 65535"},
		{"rpcPort 0", set(int64(0), "spec", "rpcPort"), "spec.rpcPort", "greater than or equal to 1"},
		{"offHeapMemoryFraction 1", set(1.0, "spec", "taskManagerConfig", "offHeapMemoryFraction"), "spec.taskManagerConfig.offHeapMemoryFraction", "less than 1"},
		{"unknown deploymentMode", set("Triple", "spec", "deploymentMode"), "spec.deploymentMode", `Unsupported value: "Triple"`},
		{"unknown imagePullPolicy", set("Sometimes", "spec", "imagePullPolicy"), "spec.imagePullPolicy", `Unsupported value: "Sometimes"`},
		{"unknown scaleMode", set("Sideways", "spec", "scaleMode"), "spec.scaleMode", `Unsupported value: "Sideways"`},
		{"parallelism a string", set("3", "spec", "parallelism"), "spec.parallelism", "must be of type integer"},
		{"unknown upgradeMode", set("Checkpoint", "spec", "upgradeMode"), "spec.upgradeMode", `Unsupported value: "Checkpoint"`},
		{"unknown state", set("Paused", "spec", "state"), "spec.state", `Unsupported value: "Paused"`},
		{"readinessTimeoutSeconds 0", set(int64(0), "spec", "readinessTimeoutSeconds"), "spec.readinessTimeoutSeconds", "greater than or equal to 1"},
		{
			"savepointDisabled with upgradeMode Savepoint",
			func(obj map[string]interface{}) {
				set(true, "spec", "savepointDisabled")(obj)
				set("Savepoint", "spec", "upgradeMode")(obj)
			},
			"spec", "savepointDisabled contradicts upgradeMode Savepoint",
		},
		{
			"savepointPath and savepointInfo disagree",
			func(obj map[string]interface{}) {
				set("s3://b/savepoint-1", "spec", "savepointPath")(obj)
				set("s3://b/savepoint-2", "spec", "savepointInfo", "savepointLocation")(obj)
			},
			"spec", "savepointPath and the deprecated savepointInfo.savepointLocation name different savepoints",
		},
		{
			"programArgs and programArgsList",
			func(obj map[string]interface{}) {
				set("--input a", "spec", "programArgs")(obj)
				set([]interface{}{"--input", "a"}, "spec", "programArgsList")(obj)
			},
			"spec", "programArgs and programArgsList both give the program's arguments",
		},
		{
			"scaleMode InPlace with BlueGreen",
			func(obj map[string]interface{}) {
				set("BlueGreen", "spec", "deploymentMode")(obj)
				set("InPlace", "spec", "scaleMode")(obj)
			},
			"spec", "scaleMode InPlace cannot apply to deploymentMode BlueGreen",
		},
		{"savepointRedeployNonce without a savepointPath", set("r1", "spec", "savepointRedeployNonce"), "spec.savepointPath",
			"savepointRedeployNonce redeploys from spec.savepointPath"},
		{"ingress with a scheme", set(map[string]interface{}{"template": "https://ui.example.com"}, "spec", "ingress"), "spec.ingress.template",
			"a host with an optional path, without a scheme"},
		{"logConfiguration of another file", set(map[string]interface{}{"flink-conf.yaml": "x: 1"}, "spec", "logConfiguration"),
			"spec.logConfiguration", "logConfiguration takes log4j-console.properties and logback-console.xml only"},
		{"ingress without a template", set(map[string]interface{}{"className": "nginx"}, "spec", "ingress"), "spec.ingress.template", "Required value"},
		{"ingress path walking up", set(map[string]interface{}{"template": "ui.example.com/{{namespace}}/../admin"}, "spec", "ingress"), "spec.ingress.template", ingressTemplateRule},
		{"ingress path as a pattern", set(map[string]interface{}{"template": "ui.example.com/.*"}, "spec", "ingress"), "spec.ingress.template", ingressTemplateRule},
		{"ingress path with a space", set(map[string]interface{}{"template": "ui.example.com/a b"}, "spec", "ingress"), "spec.ingress.template", ingressTemplateRule},
		{"ingress path with an empty segment", set(map[string]interface{}{"template": "ui.example.com//{{name}}"}, "spec", "ingress"), "spec.ingress.template", ingressTemplateRule},
		{"ingress host in capitals", set(map[string]interface{}{"template": "UI.example.com"}, "spec", "ingress"), "spec.ingress.template", ingressTemplateRule},
		{"ingress host with a port", set(map[string]interface{}{"template": "ui.example.com:8443/x"}, "spec", "ingress"), "spec.ingress.template", ingressTemplateRule},
		{"ingress with an unknown placeholder", set(map[string]interface{}{"template": "{{team}}.example.com"}, "spec", "ingress"), "spec.ingress.template", ingressTemplateRule},
		{"too many ingress annotations", set(map[string]interface{}{"template": "ui.example.com", "annotations": manyStrings(65)}, "spec", "ingress"),
			"spec.ingress.annotations", "must have at most 64 items"},
		{"too many Lyft ingress annotations", set(manyStrings(65), "spec", "ingressAnnotations"), "spec.ingressAnnotations", "must have at most 64 items"},
		{"too many ingress labels", set(map[string]interface{}{"template": "ui.example.com", "labels": manyStrings(65)}, "spec", "ingress"),
			"spec.ingress.labels", "must have at most 64 items"},
		{"too many TLS hosts", set(map[string]interface{}{"template": "ui.example.com", "tls": []interface{}{map[string]interface{}{"hosts": manyHosts(17)}}}, "spec", "ingress"),
			"spec.ingress.tls[0].hosts", "must have at most 16 items"},
		{"a TLS host past a DNS name", set(map[string]interface{}{"template": "ui.example.com", "tls": []interface{}{map[string]interface{}{"hosts": []interface{}{strings.Repeat("a", 254)}}}}, "spec", "ingress"),
			"spec.ingress.tls[0].hosts[0]", "may not be more than 253 bytes"},
		{"unknown teardownMode", set("Drain", "spec", "blueGreen", "teardownMode"), "spec.blueGreen.teardownMode", `Unsupported value: "Drain"`},
		{"wrong kind", set("FlinkApp", "kind"), "kind", "must be FlinkApplication"},
		{"wrong apiVersion", set("flink.k8s.io/v1", "apiVersion"), "apiVersion", "must be flink.k8s.io/v1beta1"},
	}
	crd := flinkCRD(t)
	wordcount := readObject(t, "examples/wordcount.yaml")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := crd.Create(context.Background(), edited(wordcount, tt.edit))
			checkRefused(t, r.Errs, tt.wantField, tt.wantDetail)
		})
	}
}

func TestValidVariantsAreAdmitted(t *testing.T) {
	tests := []struct {
		name string
		edit edit
	}{
		{"savepointPath alone", set("s3://b/savepoint-1", "spec", "savepointPath")},
		{"deprecated savepointInfo alone", set("s3://b/savepoint-1", "spec", "savepointInfo", "savepointLocation")},
		{"savepointPath and savepointInfo agree", func(obj map[string]interface{}) {
			set("s3://b/savepoint-1", "spec", "savepointPath")(obj)
			set("s3://b/savepoint-1", "spec", "savepointInfo", "savepointLocation")(obj)
		}},
		{"empty savepointInfo, as Go clients send it", set(map[string]interface{}{}, "spec", "savepointInfo")},
		{"no flinkConfig", del("spec", "flinkConfig")},
		{"no taskManagerConfig", del("spec", "taskManagerConfig")},
		{"BlueGreen", set("BlueGreen", "spec", "deploymentMode")},
		{"BlueGreen torn down by cancel", func(obj map[string]interface{}) {
			set("BlueGreen", "spec", "deploymentMode")(obj)
			set("ForceCancel", "spec", "blueGreen", "teardownMode")(obj)
		}},
		{"highest port", set(int64(65535), "spec", "uiPort")},
		{"redeploy from a named savepoint", func(obj map[string]interface{}) {
			set("s3://b/savepoint-1", "spec", "savepointPath")(obj)
			set("r1", "spec", "savepointRedeployNonce")(obj)
		}},
		{"a log4j configuration", set(map[string]interface{}{"log4j-console.properties": "rootLogger.level = INFO"}, "spec", "logConfiguration")},
		{"an ingress for the UI", set(map[string]interface{}{"template": "flink.example.com/{{namespace}}/{{name}}",
			"tls": []interface{}{map[string]interface{}{"secretName": "cert"}}}, "spec", "ingress")},
		{"an ingress in the Lyft form", set(map[string]interface{}{"template": "{{$jobCluster}}.flink.example.com"}, "spec", "ingress")},
		{"an ingress path with a trailing slash", set(map[string]interface{}{"template": "ui.{{namespace}}.example.com/flink_ui/v-1~x/{{name}}/"}, "spec", "ingress")},
		{"fraction 0", set(0.0, "spec", "jobManagerConfig", "systemMemoryFraction")},
	}
	crd := flinkCRD(t)
	wordcount := readObject(t, "examples/wordcount.yaml")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := crd.Create(context.Background(), edited(wordcount, tt.edit)); len(r.Errs) > 0 {
				t.Errorf("refused:\n%v", r.Errs.ToAggregate())
			}
		})
	}
}

func TestDeploymentModeCannotSwitchToOrFromBlueGreen(t *testing.T) {
	const refused = "deploymentMode cannot be switched to or from BlueGreen"
	tests := []struct {
		from, to string
		admitted bool
	}{
		{"Dual", "BlueGreen", false},
		{"Single", "BlueGreen", false},
		{"BlueGreen", "Dual", false},
		{"BlueGreen", "Single", false},
		{"Dual", "Single", true},
		{"Single", "Dual", true},
		{"BlueGreen", "BlueGreen", true},
	}
	crd := flinkCRD(t)
	for _, tt := range tests {
		t.Run(tt.from+" to "+tt.to, func(t *testing.T) {
			old := storedWordcount(t, set(tt.from, "spec", "deploymentMode"))
			r := crd.Update(context.Background(), edited(old, set(tt.to, "spec", "deploymentMode"), set(int64(4), "spec", "parallelism")), old)
			if tt.admitted {
				if len(r.Errs) > 0 {
					t.Errorf("refused:\n%v", r.Errs.ToAggregate())
				}
				return
			}
			checkRefused(t, r.Errs, "spec", refused)
		})
	}

	// An update that leaves deploymentMode out gets the default, Dual: a BlueGreen application must
	// keep naming its mode, or the update is refused rather than silently changing it.
	t.Run("BlueGreen to omitted", func(t *testing.T) {
		old := storedWordcount(t, set("BlueGreen", "spec", "deploymentMode"))
		r := crd.Update(context.Background(), edited(old, del("spec", "deploymentMode")), old)
		checkRefused(t, r.Errs, "spec", refused)
	})
}

// The operator tells a new spec from its own status writes by metadata.generation.
func TestGenerationCountsSpecChangesOnly(t *testing.T) {
	crd := flinkCRD(t)
	ctx := context.Background()
	old := storedWordcount(t)
	tests := []struct {
		name  string
		write func() Result
		want  int64
	}{
		{"spec change", func() Result { return crd.Update(ctx, edited(old, set(int64(4), "spec", "parallelism")), old) }, 2},
		{"label change", func() Result { return crd.Update(ctx, edited(old, set("x", "metadata", "labels", "team")), old) }, 1},
		{"unchanged", func() Result { return crd.Update(ctx, old, old) }, 1},
		{"status write", func() Result { return crd.UpdateStatus(ctx, edited(old, set("Running", "status", "phase")), old) }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.write()
			if len(r.Errs) > 0 {
				t.Fatalf("refused:\n%v", r.Errs.ToAggregate())
			}
			if got, _, _ := unstructured.NestedInt64(r.Object, "metadata", "generation"); got != tt.want {
				t.Errorf("generation = %d, want %d", got, tt.want)
			}
		})
	}
}

// Validation ratchets on update: an object stored before a rule existed can still be updated as long
// as the update does not touch the offending field.
func TestUpdatesRatchetUnchangedInvalidFields(t *testing.T) {
	crd := flinkCRD(t)
	old := edited(storedWordcount(t), set(int64(0), "spec", "parallelism"))

	r := crd.Update(context.Background(), edited(old, set("docker.io/lyft/wordcount-operator-example:v2", "spec", "image")), old)
	if len(r.Errs) > 0 {
		t.Errorf("an update leaving the invalid parallelism alone was refused:\n%v", r.Errs.ToAggregate())
	}
	r = crd.Update(context.Background(), edited(old, set(int64(-1), "spec", "parallelism")), old)
	checkRefused(t, r.Errs, "spec.parallelism", "greater than or equal to 1")
}

func TestStatusIsWrittenOnlyThroughTheStatusSubresource(t *testing.T) {
	crd := flinkCRD(t)
	ctx := context.Background()
	wordcount := readObject(t, "examples/wordcount.yaml")

	created := crd.Create(ctx, edited(wordcount, set("Running", "status", "phase")))
	if _, ok := created.Object["status"]; ok || len(created.Errs) > 0 {
		t.Errorf("create must drop the status: status=%v errs=%v", created.Object["status"], created.Errs)
	}
	old := created.Object

	history := make([]interface{}, v1beta1.MaxHistory+1)
	for i := range history {
		history[i] = map[string]interface{}{"to": "Running", "time": "2024-06-01T12:00:00Z"}
	}
	tests := []struct {
		name       string
		edit       edit
		wantField  string // empty when admitted
		wantDetail string
	}{
		{"known phase", set("Running", "status", "phase"), "", ""},
		{"unknown phase", set("Bogus", "status", "phase"), "status.phase", `Unsupported value: "Bogus"`},
		{"Lyft's SubmittingJob", set("SubmittingJob", "status", "phase"), "", ""},
		{"Lyft's RollingBackJob", set("RollingBackJob", "status", "phase"), "", ""},
		{"Lyft's empty phase", set("", "status", "phase"), "", ""},
		{"history longer than MaxHistory", set(history, "status", "history"), "status.history", "must have at most 20 items"},
		{"history entry without time", set([]interface{}{map[string]interface{}{"to": "Running"}}, "status", "history"), "status.history[0].time", "Required value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := crd.UpdateStatus(ctx, edited(old, tt.edit), old)
			if tt.wantField == "" {
				if len(r.Errs) > 0 {
					t.Errorf("refused:\n%v", r.Errs.ToAggregate())
				}
				return
			}
			checkRefused(t, r.Errs, tt.wantField, tt.wantDetail)
		})
	}

	// Every phase of the state machine must be storable.
	for _, p := range v1beta1.Phases {
		if r := crd.UpdateStatus(ctx, edited(old, set(string(p), "status", "phase")), old); len(r.Errs) > 0 {
			t.Errorf("phase %s refused:\n%v", p, r.Errs.ToAggregate())
		}
	}

	// A status write cannot change the spec.
	r := crd.UpdateStatus(ctx, edited(old, set("Running", "status", "phase"), set(int64(99), "spec", "parallelism")), old)
	if got := r.Object["spec"].(map[string]interface{})["parallelism"]; got != int64(3) || len(r.Errs) > 0 {
		t.Errorf("status write changed spec.parallelism to %v (errs %v)", got, r.Errs)
	}
}

// A manifest using every field of the Lyft operator's spec is admitted, and neither the CRD nor the
// Go types lose any of it.
func TestEveryLyftFieldSurvivesTheRoundTrip(t *testing.T) {
	data, err := os.ReadFile(repoFile(t, "deploy/crdtest/testdata/all-lyft-fields.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	in := parseObject(t, data)

	r := flinkCRD(t).Create(context.Background(), in)
	if len(r.Errs) > 0 {
		t.Fatalf("refused:\n%v", r.Errs.ToAggregate())
	}
	if len(r.Pruned) > 0 {
		t.Errorf("the CRD drops %v", r.Pruned)
	}
	// The CRD may add its defaults for fields the Lyft operator never had, nothing else.
	stored := r.Object["spec"].(map[string]interface{})
	if _, set := in["spec"].(map[string]interface{})["state"]; !set && stored["state"] == "Running" {
		delete(stored, "state")
	}
	if diff := cmp.Diff(in["spec"], r.Object["spec"]); diff != "" {
		t.Errorf("stored spec differs from the manifest (-manifest +stored):\n%s", diff)
	}

	var app v1beta1.FlinkApplication
	if err := yaml.UnmarshalStrict(data, &app); err != nil {
		t.Fatalf("the Go types do not read the manifest: %v", err)
	}
	if diff := cmp.Diff(normalized(t, in["spec"]), normalized(t, app.Spec)); diff != "" {
		t.Errorf("the Go types do not write the manifest back (-manifest +Go):\n%s", diff)
	}
}

// The CRD is generated from the Go types; this fails when one was changed without running
// `make generate`, before the mismatch prunes a field on a cluster.
func TestCRDMatchesTheGoTypes(t *testing.T) {
	for kind, typ := range map[string]reflect.Type{
		"FlinkApplication":    reflect.TypeOf(v1beta1.FlinkApplication{}),
		"FlinkSessionCluster": reflect.TypeOf(v1beta1.FlinkSessionCluster{}),
		"FlinkSessionJob":     reflect.TypeOf(v1beta1.FlinkSessionJob{}),
	} {
		compareSchema(t, kind, typ, crdFor(t, kind).Structural)
	}
}

var apiPackage = reflect.TypeOf(v1beta1.FlinkApplication{}).PkgPath()

func compareSchema(t *testing.T, path string, typ reflect.Type, s *structuralschema.Structural) {
	t.Helper()
	fields := map[string]reflect.Type{}
	collectJSONFields(typ, fields)
	for name, ft := range fields {
		p := strings.TrimPrefix(path+"."+name, ".")
		prop, ok := s.Properties[name]
		if !ok {
			t.Errorf("%s is in the Go types but not in the CRD", p)
			continue
		}
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
			if prop.Items != nil {
				prop = *prop.Items
			}
		}
		if ft.Kind() == reflect.Struct && ft.PkgPath() == apiPackage {
			compareSchema(t, p, ft, &prop)
		}
	}
	for name := range s.Properties {
		if _, ok := fields[name]; !ok {
			t.Errorf("%s is in the CRD but not in the Go types", strings.TrimPrefix(path+"."+name, "."))
		}
	}
}

// collectJSONFields maps the JSON names of a struct's fields, inlined embeddings included, to their types.
func collectJSONFields(typ reflect.Type, out map[string]reflect.Type) {
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			collectJSONFields(f.Type, out)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
}

// ingressTemplateRule is the message of the CEL rule on spec.ingress.template's syntax.
const ingressTemplateRule = "spec.ingress.template is a host of lowercase letters, digits, '-' and '.'"

func manyStrings(n int) map[string]interface{} {
	out := map[string]interface{}{}
	for i := range n {
		out[fmt.Sprintf("example.com/k%d", i)] = "v"
	}
	return out
}

func manyHosts(n int) []interface{} {
	var out []interface{}
	for i := range n {
		out = append(out, fmt.Sprintf("h%d.example.com", i))
	}
	return out
}
