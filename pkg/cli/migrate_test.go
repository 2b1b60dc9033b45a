package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/cli/migrate"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
	appfake "github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/fake"
)

// The command's wiring: its argument, flags, namespace, output and exit codes. What a migration
// proves, and its resumption, are pkg/cli/migrate's tests.

// apacheSessionJob is a FlinkSessionJob the Apache operator runs, as 1.16's status says.
func apacheSessionJob(upgradeMode string) *unstructured.Unstructured {
	spec := map[string]interface{}{"deploymentName": "session", "job": map[string]interface{}{
		"jarURI": "https://repo.example.com/etl.jar", "parallelism": int64(2), "upgradeMode": upgradeMode, "state": "running"}}
	last, _ := json.Marshal(map[string]interface{}{"spec": spec, "resource_metadata": map[string]interface{}{"firstDeployment": false}})
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkSessionJob",
		"metadata": map[string]interface{}{"name": "etl", "namespace": "jobs", "uid": "uid-etl", "generation": int64(1), "resourceVersion": "7"},
		"spec":     spec,
		"status": map[string]interface{}{
			"jobStatus":            map[string]interface{}{"jobId": "0a1b", "state": "RUNNING", "startTime": "1767268800000", "savepointInfo": map[string]interface{}{}},
			"observedGeneration":   int64(1),
			"lifecycleState":       "STABLE",
			"reconciliationStatus": map[string]interface{}{"reconciliationTimestamp": int64(1767268790000), "lastReconciledSpec": string(last), "state": "DEPLOYED"},
		},
	}}
}

// apacheOperator makes the fake act as the Apache operator on a suspend: stop the job with a
// savepoint (or, savepointFails, report "Savepoint Error" in status.error). stall: it never acts.
type apacheOperator struct{ stall, savepointFails bool }

func (op apacheOperator) client(obj *unstructured.Unstructured) *dynamicfake.FakeDynamicClient {
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), migrate.ListKinds, obj)
	c.PrependReactor("get", "flinksessionjobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		o, _ := c.Tracker().Get(migrate.FlinkSessionJobs, "jobs", "etl")
		u := o.(*unstructured.Unstructured)
		state, _, _ := unstructured.NestedString(u.Object, "spec", "job", "state")
		if op.stall || state != "suspended" || u.Object["status"].(map[string]interface{})["lifecycleState"] == "SUSPENDED" {
			return false, nil, nil
		}
		status := u.Object["status"].(map[string]interface{})
		if op.savepointFails {
			status["error"] = `{"type":"org.apache.flink.kubernetes.operator.exception.UpgradeFailureException","message":"Savepoint Error"}`
		} else {
			spec := runtime.DeepCopyJSONValue(u.Object["spec"]).(map[string]interface{})
			last, _ := json.Marshal(map[string]interface{}{"spec": spec})
			path := "s3://state/savepoint-0a1b-1"
			status["jobStatus"] = map[string]interface{}{"state": "FINISHED", "startTime": "1767268800000", "upgradeSavepointPath": path,
				"savepointInfo": map[string]interface{}{"lastSavepoint": map[string]interface{}{"location": path, "timeStamp": int64(1767268900000), "triggerType": "UPGRADE"}}}
			status["reconciliationStatus"] = map[string]interface{}{"reconciliationTimestamp": int64(1767268900100), "lastReconciledSpec": string(last), "state": "DEPLOYED"}
			status["lifecycleState"] = "SUSPENDED"
		}
		_ = c.Tracker().Update(migrate.FlinkSessionJobs, u, "jobs")
		return false, nil, nil
	})
	return c
}

func runMigrate(t *testing.T, apache dynamic.Interface, fsm versioned.Interface, args ...string) (int, string, string) {
	t.Helper()
	saved := apacheClients
	t.Cleanup(func() { apacheClients = saved })
	apacheClients = func(string, string) (dynamic.Interface, error) { return apache, nil }
	var out, errOut bytes.Buffer
	code := Run(append([]string{"migrate"}, args...), &out, &errOut, func(string, string) (versioned.Interface, string, error) { return fsm, "jobs", nil })
	return code, out.String(), errOut.String()
}

func TestMigrateCreatesTheSessionJobFromTheSavepoint(t *testing.T) {
	fsm := appfake.NewSimpleClientset(&v1beta1.FlinkSessionCluster{ObjectMeta: metav1.ObjectMeta{Name: "session", Namespace: "jobs"}})
	apache := apacheOperator{}.client(apacheSessionJob("savepoint"))
	code, out, errOut := runMigrate(t, apache, fsm, "flinksessionjob/etl", "--timeout", "30s")
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "asked flink.apache.org FlinkSessionJob/etl to suspend with a savepoint")
	assert.Contains(t, out, "savepoint s3://state/savepoint-0a1b-1 recorded at 2026-01-01T12:01:40Z; job FINISHED")
	assert.Contains(t, out, "created FlinkSessionJob/etl starting from s3://state/savepoint-0a1b-1")
	assert.Contains(t, out, "left FlinkSessionJob/etl suspended; delete it when you no longer need it")
	job, err := fsm.FlinkV1beta1().FlinkSessionJobs("jobs").Get(context.Background(), "etl", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "s3://state/savepoint-0a1b-1", job.Spec.Job.InitialSavepointPath)
	assert.Equal(t, v1beta1.UpgradeModeSavepoint, job.Spec.Job.UpgradeMode)

	code, out, _ = runMigrate(t, apache, fsm, "sessionjob/etl")
	assert.Equal(t, ExitOK, code, "a finished migration run again")
	assert.Contains(t, out, "continuing the migration recorded in annotation flink.k8s.io/migration, at step created")
}

func TestMigrateExitCodes(t *testing.T) {
	cluster := &v1beta1.FlinkSessionCluster{ObjectMeta: metav1.ObjectMeta{Name: "session", Namespace: "jobs"}}
	for _, c := range []struct {
		name     string
		op       apacheOperator
		mode     string
		args     []string
		code     int
		saying   string
		unmoved  bool
		recorded bool
	}{
		{"not an Apache kind", apacheOperator{}, "savepoint", []string{"flinkapplication/etl"}, ExitError,
			"migrate moves an Apache FlinkDeployment (flinkdeployment/NAME) or FlinkSessionJob", true, false},
		{"not there", apacheOperator{}, "savepoint", []string{"flinksessionjob/gone"}, ExitError, "not found", true, false},
		{"stateless", apacheOperator{}, "stateless", []string{"flinksessionjob/etl"}, ExitError, "--allow-stateless", true, false},
		{"never stops", apacheOperator{stall: true}, "savepoint", []string{"flinksessionjob/etl", "--timeout", "50ms"}, ExitTimeout,
			"run the same command again to continue waiting", false, true},
		{"savepoint fails", apacheOperator{savepointFails: true}, "savepoint", []string{"flinksessionjob/etl"}, ExitFailed,
			"status.error: UpgradeFailureException: Savepoint Error", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsm := appfake.NewSimpleClientset(cluster.DeepCopy())
			apache := c.op.client(apacheSessionJob(c.mode))
			code, _, errOut := runMigrate(t, apache, fsm, c.args...)
			assert.Equal(t, c.code, code, errOut)
			assert.Contains(t, errOut, c.saying)
			o, err := apache.Tracker().Get(migrate.FlinkSessionJobs, "jobs", "etl")
			require.NoError(t, err)
			u := o.(*unstructured.Unstructured)
			state, _, _ := unstructured.NestedString(u.Object, "spec", "job", "state")
			assert.Equal(t, c.unmoved, state == "running")
			assert.Equal(t, c.recorded, u.GetAnnotations()[migrate.RecordAnnotation] != "")
			_, err = fsm.FlinkV1beta1().FlinkSessionJobs("jobs").Get(context.Background(), "etl", metav1.GetOptions{})
			assert.Error(t, err, "nothing created")
		})
	}
}

func TestMigrateDryRunChangesNothing(t *testing.T) {
	fsm := appfake.NewSimpleClientset(&v1beta1.FlinkSessionCluster{ObjectMeta: metav1.ObjectMeta{Name: "session", Namespace: "jobs"}})
	apache := apacheOperator{}.client(apacheSessionJob("last-state"))
	code, out, errOut := runMigrate(t, apache, fsm, "flinksessionjob/etl", "--dry-run", "-n", "jobs")
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "dry run: nothing is changed")
	for _, a := range apache.Actions() {
		assert.Contains(t, []string{"get", "list"}, a.GetVerb(), "a dry run only reads")
	}
	for _, a := range fsm.Actions() {
		assert.Equal(t, "get", a.GetVerb(), "a dry run only reads")
	}
}
