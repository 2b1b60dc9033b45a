package crdtest

import (
	"context"
	"os"
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// sessionExample is the document of examples/session-cluster.yaml with the given kind and name.
func sessionExample(t *testing.T, kind, name string) map[string]interface{} {
	t.Helper()
	data, err := os.ReadFile(repoFile(t, "examples/session-cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range documents(data) {
		obj := parseObject(t, doc)
		meta, _ := obj["metadata"].(map[string]interface{})
		if obj["kind"] == kind && meta["name"] == name {
			return obj
		}
	}
	t.Fatalf("examples/session-cluster.yaml has no %s %s", kind, name)
	return nil
}

func TestSessionExampleIsAdmittedAndDefaulted(t *testing.T) {
	ctx := context.Background()
	cluster := crdFor(t, "FlinkSessionCluster").Create(ctx, sessionExample(t, "FlinkSessionCluster", "shared"))
	if len(cluster.Errs) > 0 {
		t.Fatalf("cluster refused:\n%v", cluster.Errs.ToAggregate())
	}
	tm := cluster.Object["spec"].(map[string]interface{})["taskManagerConfig"].(map[string]interface{})
	if tm["replicas"] != int64(2) || tm["taskSlots"] != int64(4) {
		t.Errorf("taskManagerConfig = %v, want replicas 2 and taskSlots 4", tm)
	}

	job := crdFor(t, "FlinkSessionJob").Create(ctx, sessionExample(t, "FlinkSessionJob", "top-speed"))
	if len(job.Errs) > 0 {
		t.Fatalf("job refused:\n%v", job.Errs.ToAggregate())
	}
	spec := job.Object["spec"].(map[string]interface{})
	if spec["deleteMode"] != "ForceCancel" {
		t.Errorf("deleteMode = %v, want the ForceCancel set, not the default", spec["deleteMode"])
	}
	if state := spec["job"].(map[string]interface{})["state"]; state != "Running" {
		t.Errorf("job.state = %v, want the default Running", state)
	}
}

func TestSessionClusterDefaultsToOneTaskManager(t *testing.T) {
	r := crdFor(t, "FlinkSessionCluster").Create(context.Background(),
		edited(sessionExample(t, "FlinkSessionCluster", "shared"), del("spec", "taskManagerConfig", "replicas")))
	if len(r.Errs) > 0 {
		t.Fatalf("refused:\n%v", r.Errs.ToAggregate())
	}
	if got := r.Object["spec"].(map[string]interface{})["taskManagerConfig"].(map[string]interface{})["replicas"]; got != int64(1) {
		t.Errorf("taskManagerConfig.replicas = %v, want the default 1", got)
	}
}

func TestInvalidSessionClustersAreRefusedNamingTheField(t *testing.T) {
	tests := []struct {
		name       string
		edit       edit
		wantField  string
		wantDetail string
	}{
		{"image missing", del("spec", "image"), "spec.image", "Required value"},
		{"replicas 0", set(int64(0), "spec", "taskManagerConfig", "replicas"), "spec.taskManagerConfig.replicas", "greater than or equal to 1"},
		{"taskSlots 0", set(int64(0), "spec", "taskManagerConfig", "taskSlots"), "spec.taskManagerConfig.taskSlots", "greater than or equal to 1"},
		{"uiPort 70000", set(int64(70000), "spec", "uiPort"), "spec.uiPort", "less than or equal to 65535"},
		{"unknown imagePullPolicy", set("Sometimes", "spec", "imagePullPolicy"), "spec.imagePullPolicy", `Unsupported value: "Sometimes"`},
	}
	crd := crdFor(t, "FlinkSessionCluster")
	cluster := sessionExample(t, "FlinkSessionCluster", "shared")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRefused(t, crd.Create(context.Background(), edited(cluster, tt.edit)).Errs, tt.wantField, tt.wantDetail)
		})
	}
}

func TestInvalidSessionJobsAreRefusedNamingTheField(t *testing.T) {
	tests := []struct {
		name       string
		edit       edit
		wantField  string
		wantDetail string
	}{
		{"clusterName missing", del("spec", "clusterName"), "spec.clusterName", "Required value"},
		{"clusterName empty", set("", "spec", "clusterName"), "spec.clusterName", "at least 1 chars long"},
		{"job missing", del("spec", "job"), "spec.job", "Required value"},
		{"jarURI missing", del("spec", "job", "jarURI"), "spec.job.jarURI", "Required value"},
		{"jarURI ftp", set("ftp://jars.example.com/job.jar", "spec", "job", "jarURI"), "spec.job.jarURI",
			"jarURI must start with https://, http:// or local://"},
		{"jarURI a bare path", set("/opt/flink/job.jar", "spec", "job", "jarURI"), "spec.job.jarURI",
			"jarURI must start with https://, http:// or local://"},
		{"jarURI with a terminal escape", set("https://jars.example.com/job\x1b[2J\x1b[1A.jar", "spec", "job", "jarURI"), "spec.job.jarURI",
			"jarURI must hold no control or format character"},
		{"jarURI with a line break", set("https://jars.example.com/job.jar\nforged: ok", "spec", "job", "jarURI"), "spec.job.jarURI",
			"jarURI must hold no control or format character"},
		{"jarURI with a C1 control", set("https://jars.example.com/job\u0085.jar", "spec", "job", "jarURI"), "spec.job.jarURI",
			"jarURI must hold no control or format character"},
		{"jarURI with a bidirectional override", set("https://jars.example.com/\u202eraj.exe", "spec", "job", "jarURI"), "spec.job.jarURI",
			"jarURI must hold no control or format character"},
		{"jarSHA256 too short", set("abc123", "spec", "job", "jarSHA256"), "spec.job.jarSHA256", "should match"},
		{"jarSHA256 not hex", set("z"+sha256Hex[1:], "spec", "job", "jarSHA256"), "spec.job.jarSHA256", "should match"},
		{"jarSHA256 too long", set(sha256Hex+"0", "spec", "job", "jarSHA256"), "spec.job.jarSHA256", "should match"},
		{"parallelism 0", set(int64(0), "spec", "job", "parallelism"), "spec.job.parallelism", "greater than or equal to 1"},
		{"parallelism past Flink's maximum", set(int64(32769), "spec", "job", "parallelism"), "spec.job.parallelism", "less than or equal to 32768"},
		{"parallelism past int32", set(int64(1)<<31, "spec", "job", "parallelism"), "spec.job.parallelism", "less than or equal to 32768"},
		{"unknown upgradeMode", set("Checkpoint", "spec", "job", "upgradeMode"), "spec.job.upgradeMode", `Unsupported value: "Checkpoint"`},
		{"unknown state", set("Paused", "spec", "job", "state"), "spec.job.state", `Unsupported value: "Paused"`},
		{"unknown deleteMode", set("Later", "spec", "deleteMode"), "spec.deleteMode", `Unsupported value: "Later"`},
		{"args a string", set("--input x", "spec", "job", "args"), "spec.job.args", "must be of type array"},
		{"wrong kind", set("FlinkApplication", "kind"), "kind", "must be FlinkSessionJob"},
	}
	crd := crdFor(t, "FlinkSessionJob")
	job := sessionExample(t, "FlinkSessionJob", "wordcount")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRefused(t, crd.Create(context.Background(), edited(job, tt.edit)).Errs, tt.wantField, tt.wantDetail)
		})
	}
}

const sha256Hex = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func TestValidSessionJobVariantsAreAdmitted(t *testing.T) {
	tests := []struct {
		name string
		edit edit
	}{
		{"https jar with its sha256", func(obj map[string]interface{}) {
			set("https://jars.example.com/job-1.0.jar", "spec", "job", "jarURI")(obj)
			set(sha256Hex, "spec", "job", "jarSHA256")(obj)
		}},
		{"upper case sha256", set("9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08", "spec", "job", "jarSHA256")},
		{"http jar", set("http://nexus.internal/job.jar", "spec", "job", "jarURI")},
		{"jar with a name in Unicode", set("https://jars.example.com/café-日本.jar", "spec", "job", "jarURI")},
		{"highest parallelism Flink runs", set(int64(32768), "spec", "job", "parallelism")},
		{"no parallelism", del("spec", "job", "parallelism")},
		{"suspended, restored from a savepoint", func(obj map[string]interface{}) {
			set("Suspended", "spec", "job", "state")(obj)
			set("s3://b/savepoint-1", "spec", "job", "initialSavepointPath")(obj)
			set(true, "spec", "job", "allowNonRestoredState")(obj)
			set("2", "spec", "job", "restartNonce")(obj)
		}},
		{"LastState", set("LastState", "spec", "job", "upgradeMode")},
		{"no flinkConfig", del("spec", "flinkConfig")},
	}
	crd := crdFor(t, "FlinkSessionJob")
	job := sessionExample(t, "FlinkSessionJob", "wordcount")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := crd.Create(context.Background(), edited(job, tt.edit))
			if len(r.Errs) > 0 {
				t.Errorf("refused:\n%v", r.Errs.ToAggregate())
			}
			if len(r.Pruned) > 0 {
				t.Errorf("pruned %v", r.Pruned)
			}
		})
	}
}

// Every phase either kind's state machine can enter must be storable, and no other.
func TestSessionStatusPhasesAreStorable(t *testing.T) {
	ctx := context.Background()
	kinds := []struct {
		kind, name string
		phases     []string
	}{
		{"FlinkSessionCluster", "shared", phaseNames(v1beta1.SessionClusterPhases)},
		{"FlinkSessionJob", "wordcount", phaseNames(v1beta1.SessionJobPhases)},
	}
	for _, k := range kinds {
		t.Run(k.kind, func(t *testing.T) {
			crd := crdFor(t, k.kind)
			created := crd.Create(ctx, sessionExample(t, k.kind, k.name))
			if len(created.Errs) > 0 {
				t.Fatalf("refused:\n%v", created.Errs.ToAggregate())
			}
			old := created.Object
			for _, p := range k.phases {
				history := []interface{}{map[string]interface{}{"from": "New", "to": p, "time": "2024-06-01T12:00:00Z"}}
				r := crd.UpdateStatus(ctx, edited(old, set(p, "status", "phase"), set(history, "status", "history")), old)
				if len(r.Errs) > 0 {
					t.Errorf("phase %s refused:\n%v", p, r.Errs.ToAggregate())
				}
			}
			checkRefused(t, crd.UpdateStatus(ctx, edited(old, set("Rescaling", "status", "phase")), old).Errs,
				"status.phase", `Unsupported value: "Rescaling"`)
			history := make([]interface{}, v1beta1.MaxHistory+1)
			for i := range history {
				history[i] = map[string]interface{}{"to": "Running", "time": "2024-06-01T12:00:00Z"}
			}
			checkRefused(t, crd.UpdateStatus(ctx, edited(old, set(history, "status", "history")), old).Errs,
				"status.history", "must have at most 20 items")
		})
	}
}

func TestSessionClusterListsItsJobsByName(t *testing.T) {
	ctx := context.Background()
	crd := crdFor(t, "FlinkSessionCluster")
	old := crd.Create(ctx, sessionExample(t, "FlinkSessionCluster", "shared")).Object
	jobs := []interface{}{
		map[string]interface{}{"name": "wordcount", "jobID": "0123456789abcdef0123456789abcdef", "state": "RUNNING"},
		map[string]interface{}{"name": "top-speed"},
	}
	if r := crd.UpdateStatus(ctx, edited(old, set(jobs, "status", "jobs")), old); len(r.Errs) > 0 {
		t.Errorf("refused:\n%v", r.Errs.ToAggregate())
	}
	dup := append(jobs, map[string]interface{}{"name": "wordcount"})
	checkRefused(t, crd.UpdateStatus(ctx, edited(old, set(dup, "status", "jobs")), old).Errs, "status.jobs[2]", "Duplicate value")
}

func phaseNames[P ~string](phases []P) []string {
	out := make([]string, len(phases))
	for i, p := range phases {
		out[i] = string(p)
	}
	return out
}

// A job moved to another cluster by editing clusterName would leave its job running on the first:
// the change is refused at apply time.
func TestSessionJobClusterNameCannotChange(t *testing.T) {
	crd := crdFor(t, "FlinkSessionJob")
	stored := crd.Create(context.Background(), sessionExample(t, "FlinkSessionJob", "top-speed"))
	if len(stored.Errs) > 0 {
		t.Fatalf("creating the example: %v", stored.Errs.ToAggregate())
	}
	old := stored.Object
	r := crd.Update(context.Background(), edited(old, set("another-cluster", "spec", "clusterName")), old)
	checkRefused(t, r.Errs, "spec.clusterName", "clusterName cannot change")
	if r := crd.Update(context.Background(), edited(old, set(int64(4), "spec", "job", "parallelism")), old); len(r.Errs) > 0 {
		t.Errorf("another change refused:\n%v", r.Errs.ToAggregate())
	}
}
