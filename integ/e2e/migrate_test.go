package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/integ/apachefake"
	"github.com/flinkfsm/flinkfsm/integ/flinksim"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/cli"
	"github.com/flinkfsm/flinkfsm/pkg/cli/migrate"
)

// kubectl flink migrate on the local cluster, as a user runs it: an application-mode FlinkDeployment
// of the Apache operator's basic example, its job running under the Apache operator 1.16 (played by
// integ/apachefake on the real API server, its savepoints written to the simulator's storage), moves
// to a FlinkApplication of the same name that the real operator runs from exactly the savepoint the
// Apache operator's suspend took. The FlinkDeployment stays, suspended, its record saying the
// migration is done; running the command again changes nothing. The Apache operator records the
// suspend's savepoint in a FlinkStateSnapshot (1.16's default where its CRD is installed) or, with
// kubernetes.operator.snapshot.resource.enabled off, in status.jobStatus.savepointInfo.
func TestMigrateMovesAnApacheFlinkDeploymentFromItsSuspendSavepoint(t *testing.T) {
	defer stopEnvOnPanic()
	installApacheCRDs(t)
	for _, c := range []struct {
		name              string
		snapshotResources bool
	}{
		{"FlinkStateSnapshot", true},
		{"savepointInfo", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer stopEnvOnPanic()
			migrateApacheBasicExample(t, c.snapshotResources)
		})
	}
}

func migrateApacheBasicExample(t *testing.T, snapshotResources bool) {
	s := newScenario(t)
	s.allowApacheExamples()
	apache, err := dynamic.NewForConfig(env.Cluster.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	deployments := apache.Resource(apachefake.FlinkDeployments).Namespace(s.ns)
	snapshots := apache.Resource(apachefake.FlinkStateSnapshots).Namespace(s.ns)

	// The FlinkDeployment, and the status 1.16 writes once its job runs.
	obj := apacheBasicExample(t, s.ns)
	name := obj.GetName()
	created, err := deployments.Create(s.ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating FlinkDeployment %s: %v", name, err)
	}
	jobID := randomHex(16)
	spec := created.Object["spec"].(map[string]interface{})
	created.Object["status"] = apachefake.RunningStatus("FlinkDeployment", name, spec,
		apachefake.Running{JobID: jobID, StartedAt: time.Now().Add(-time.Minute).UnixMilli()})
	if created, err = deployments.UpdateStatus(s.ctx, created, metav1.UpdateOptions{FieldManager: "flink-kubernetes-operator"}); err != nil {
		t.Fatalf("writing the status of FlinkDeployment %s: %v", name, err)
	}

	// The Apache operator: it stops the job with a savepoint once the spec asks for the suspend.
	operator := &apachefake.Operator{Client: apache, Resource: apachefake.FlinkDeployments, Namespace: s.ns, Name: name,
		SnapshotResources: snapshotResources, Delay: 3 * time.Second, Logf: t.Logf,
		TakeSavepoint: func(path, jobID string) error {
			env.Fleet.Storage().PutBack(flinksim.Snapshot{Path: path, JobID: jobID, CheckpointID: 42, Savepoint: true,
				Format: "CANONICAL", CreatedAt: time.Now()})
			return nil
		}}
	ctx, stopOperator := context.WithCancel(s.ctx)
	operatorDone := make(chan error, 1)
	go func() { operatorDone <- operator.Run(ctx) }()
	defer func() {
		stopOperator()
		if err := <-operatorDone; !errors.Is(err, context.Canceled) {
			t.Errorf("the Apache operator stopped: %v", err)
		}
	}()

	code, out, errOut := kubectlFlink("migrate", "flinkdeployment/"+name, "-n", s.ns, "--timeout", "2m")
	t.Logf("kubectl flink migrate, exit code %d:\n%s%s", code, out, errOut)
	if code != cli.ExitOK {
		t.Fatalf("kubectl flink migrate exited %d: %s", code, errOut)
	}
	stops := operator.Stops()
	if len(stops) != 1 {
		t.Fatalf("the Apache operator stopped the job %d times (%q), want once, with a savepoint", len(stops), stops)
	}
	savepoint := stops[0]
	if !regexp.MustCompile(`^file:///flink/savepoints/savepoint-` + jobID[:6] + `-[0-9a-f]{12}$`).MatchString(savepoint) {
		t.Errorf("the Apache operator's savepoint %q is not where Flink would put one of job %s", savepoint, jobID)
	}
	provenBy := "savepointInfo.lastSavepoint (triggerType UPGRADE)"
	if snapshotResources {
		names := operator.Snapshots()
		if len(names) != 1 {
			t.Fatalf("the Apache operator created FlinkStateSnapshots %q, want one", names)
		}
		provenBy = "FlinkStateSnapshot " + names[0] + " (snapshot.trigger-type=UPGRADE)"
	}
	for _, step := range []string{
		"flink.apache.org FlinkDeployment " + s.ns + "/" + name + ": spec.job.state running, upgradeMode savepoint; status.jobStatus.state RUNNING, lifecycleState STABLE",
		"converted FlinkDeployment/" + name + " to FlinkApplication/" + name,
		"asked flink.apache.org FlinkDeployment/" + name + " to suspend with a savepoint (spec.job.state suspended, spec.job.upgradeMode savepoint)",
		"recorded the request, and what the Apache operator had recorded before it, in annotation " + migrate.RecordAnnotation,
		"waiting for the Apache operator to record it (up to 2m0s)",
		"waiting: status.reconciliationStatus.lastReconciledSpec has job.state running",
		"savepoint " + savepoint + " recorded at ",
		"; job FINISHED (proven by status.jobStatus.upgradeSavepointPath and " + provenBy + ")",
		"created FlinkApplication/" + name + " starting from " + savepoint,
		"left FlinkDeployment/" + name + " suspended; delete it when you no longer need it",
		"flinkfsm runs the job as FlinkApplication/" + name + " now",
	} {
		if !strings.Contains(out, step) {
			t.Errorf("the output does not say %q", step)
		}
	}

	// The FlinkApplication starts from exactly that savepoint, and says where it came from.
	app, err := s.get(name)
	if err != nil {
		t.Fatalf("the migrated FlinkApplication: %v", err)
	}
	s.apps = append(s.apps, name)
	if app.Spec.SavepointPath != savepoint {
		t.Errorf("spec.savepointPath is %q, want the suspend's savepoint %q", app.Spec.SavepointPath, savepoint)
	}
	if app.Spec.State != v1beta1.JobStateRunning || app.Spec.UpgradeMode != v1beta1.UpgradeModeSavepoint {
		t.Errorf("spec.state %q, spec.upgradeMode %q; want Running, Savepoint", app.Spec.State, app.Spec.UpgradeMode)
	}
	if got := app.Annotations[migrate.FromUIDAnnotation]; got != string(created.GetUID()) {
		t.Errorf("annotation %s is %q, want the FlinkDeployment's UID %s", migrate.FromUIDAnnotation, got, created.GetUID())
	}
	if got, want := app.Annotations[migrate.FromAnnotation], "flink.apache.org FlinkDeployment "+s.ns+"/"+name; got != want {
		t.Errorf("annotation %s is %q, want %q", migrate.FromAnnotation, got, want)
	}

	// The real operator runs it, and Flink restored exactly that savepoint.
	app = s.waitRunning(name, "")
	jobs := s.timeline(name)
	if len(jobs) != 1 {
		t.Fatalf("the simulator ran %d jobs for %s, want 1", len(jobs), name)
	}
	if jobs[0].RestoredFrom != savepoint {
		t.Errorf("Flink restored the job from %q, want %q", jobs[0].RestoredFrom, savepoint)
	}
	s.assertSavepointOf(jobs[0].RestoredFrom, jobID)
	if app.Status.JobStatus.RestorePath != savepoint {
		t.Errorf("status.jobStatus.restorePath is %q, want %q", app.Status.JobStatus.RestorePath, savepoint)
	}

	// The FlinkDeployment stays, suspended, its record at the last step.
	after, err := deployments.Get(s.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the FlinkDeployment after the migration: %v", err)
	}
	if state, mode := nestedText(after, "spec", "job", "state"), nestedText(after, "spec", "job", "upgradeMode"); state != apachefake.JobSuspended || mode != apachefake.UpgradeSavepoint {
		t.Errorf("the FlinkDeployment has spec.job.state %q, upgradeMode %q; want suspended, savepoint", state, mode)
	}
	if lc := nestedText(after, "status", "lifecycleState"); lc != "SUSPENDED" {
		t.Errorf("the FlinkDeployment's lifecycleState is %q, want SUSPENDED", lc)
	}
	var record struct {
		Step, Target, Savepoint string
	}
	if err := json.Unmarshal([]byte(after.GetAnnotations()[migrate.RecordAnnotation]), &record); err != nil {
		t.Fatalf("annotation %s: %v", migrate.RecordAnnotation, err)
	}
	if record.Step != "created" || record.Target != "FlinkApplication/"+name || record.Savepoint != savepoint {
		t.Errorf("annotation %s records %+v; want step created, target FlinkApplication/%s, savepoint %s", migrate.RecordAnnotation, record, name, savepoint)
	}

	// Again: it says the migration is done, and nothing new is asked for or created.
	code, out, errOut = kubectlFlink("migrate", "flinkdeployment/"+name, "-n", s.ns, "--timeout", "2m")
	t.Logf("kubectl flink migrate again, exit code %d:\n%s%s", code, out, errOut)
	if code != cli.ExitOK {
		t.Fatalf("kubectl flink migrate, run again, exited %d: %s", code, errOut)
	}
	if want := "continuing the migration recorded in annotation " + migrate.RecordAnnotation + ", at step created"; !strings.Contains(out, want) {
		t.Errorf("the second run does not say %q", want)
	}
	for _, step := range []string{"asked ", "created FlinkApplication"} {
		if strings.Contains(out, step) {
			t.Errorf("the second run says %q", step)
		}
	}
	again, err := deployments.Get(s.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.GetResourceVersion() != after.GetResourceVersion() {
		t.Errorf("the second run changed the FlinkDeployment (resourceVersion %s, then %s)", after.GetResourceVersion(), again.GetResourceVersion())
	}
	if n := len(operator.Stops()); n != 1 {
		t.Errorf("the Apache operator stopped the job %d times, want once", n)
	}
	apps, err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).List(s.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(apps.Items) != 1 || apps.Items[0].UID != app.UID || apps.Items[0].Generation != app.Generation {
		t.Errorf("after the second run: %d FlinkApplications, want the one the first created, its spec unchanged (generation %d)", len(apps.Items), app.Generation)
	}
	if n := len(s.timeline(name)); n != 1 {
		t.Errorf("after the second run the simulator ran %d jobs for %s, want 1", n, name)
	}
	list, err := snapshots.List(s.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != len(operator.Snapshots()) {
		t.Errorf("%d FlinkStateSnapshots, want the %d the Apache operator created", len(list.Items), len(operator.Snapshots()))
	}
	if sps := savepointsOf(jobID); len(sps) != 1 {
		t.Errorf("the storage holds %d savepoints of the Apache job, want the suspend's alone", len(sps))
	}
}

// kubectlFlink runs kubectl flink, as its binary runs, against the local cluster's kubeconfig.
func kubectlFlink(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Main(append(args, "--kubeconfig", env.Cluster.KubeconfigPath), &out, &errOut)
	return code, out.String(), errOut.String()
}

// apacheBasicExample is the Apache operator's basic example (examples/basic.yaml) in the namespace,
// made to keep its state across a suspend as migrate needs it (upgradeMode savepoint, a savepoint
// directory in the simulator's storage). Its JobManager's environment carries FLINK_VERSION, as
// onFlink does for converted manifests: where the simulator reads the release the image runs.
func apacheBasicExample(t *testing.T, ns string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile("../../pkg/cli/convert/testdata/apache/examples_basic.yaml")
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		t.Fatalf("examples_basic.yaml: %v", err)
	}
	u.SetNamespace(ns)
	version := strings.ReplaceAll(strings.TrimPrefix(nestedText(u, "spec", "flinkVersion"), "v"), "_", ".")
	for _, set := range []struct {
		value interface{}
		path  []string
	}{
		{"file:///flink/savepoints", []string{"spec", "flinkConfiguration", "state.savepoints.dir"}},
		{"file:///flink/checkpoints", []string{"spec", "flinkConfiguration", "state.checkpoints.dir"}},
		{apachefake.UpgradeSavepoint, []string{"spec", "job", "upgradeMode"}},
		{map[string]interface{}{"spec": map[string]interface{}{"containers": []interface{}{map[string]interface{}{
			"name": "flink-main-container", "env": []interface{}{map[string]interface{}{"name": "FLINK_VERSION", "value": version}}}}}},
			[]string{"spec", "jobManager", "podTemplate"}},
	} {
		if err := unstructured.SetNestedField(u.Object, set.value, set.path...); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// allowApacheExamples annotates the namespace as its administrator must for the Apache examples:
// their service account flink, which flinkfsm's pod policy refuses unless the namespace allows it.
func (s *scenario) allowApacheExamples() {
	s.t.Helper()
	ns, err := env.Kube.CoreV1().Namespaces().Get(s.ctx, s.ns, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	ns.Annotations = map[string]string{"flinkfsm.io/allowed-service-accounts": "default,flink"}
	if _, err := env.Kube.CoreV1().Namespaces().Update(s.ctx, ns, metav1.UpdateOptions{}); err != nil {
		s.t.Fatal(err)
	}
	// The API server's admission policies read namespaces from a cache: wait until a dry run of an
	// application running as flink is admitted, so that what migrate creates is judged by the
	// annotation.
	probe := &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: s.ns}, Spec: appSpec()}
	probe.Spec.ServiceAccountName = "flink"
	err = admitted(func() error {
		_, err := env.Apps.FlinkV1beta1().FlinkApplications(s.ns).Create(s.ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	if err != nil {
		s.t.Fatalf("a dry run of an application running as flink: %v", err)
	}
}

var (
	apacheCRDsOnce sync.Once
	apacheCRDsErr  error
)

// installApacheCRDs installs, once for the test binary, the Apache operator's resources as its
// CRDs name them (FlinkDeployment, FlinkSessionJob, FlinkStateSnapshot of flink.apache.org/v1beta1,
// with the status subresource), their schemas left open, and waits until they are served.
func installApacheCRDs(t *testing.T) {
	t.Helper()
	apacheCRDsOnce.Do(func() { apacheCRDsErr = createApacheCRDs() })
	if apacheCRDsErr != nil {
		t.Fatalf("installing the Apache operator's CRDs: %v", apacheCRDsErr)
	}
}

func createApacheCRDs() error {
	client, err := apiextensions.NewForConfig(env.Cluster.RestConfig())
	if err != nil {
		return err
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	open := true
	var names []string
	for _, n := range []apiextensionsv1.CustomResourceDefinitionNames{
		{Kind: "FlinkDeployment", ListKind: "FlinkDeploymentList", Plural: "flinkdeployments", Singular: "flinkdeployment", ShortNames: []string{"flinkdep"}},
		{Kind: "FlinkSessionJob", ListKind: "FlinkSessionJobList", Plural: "flinksessionjobs", Singular: "flinksessionjob", ShortNames: []string{"sessionjob"}},
		{Kind: "FlinkStateSnapshot", ListKind: "FlinkStateSnapshotList", Plural: "flinkstatesnapshots", Singular: "flinkstatesnapshot", ShortNames: []string{"flinksnp"}},
	} {
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: n.Plural + "." + apachefake.Group},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: apachefake.Group, Names: n, Scope: apiextensionsv1.NamespaceScoped,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: apachefake.Version, Served: true, Storage: true,
					Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &open}},
					Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				}},
			},
		}
		if _, err := crds.Create(context.Background(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		names = append(names, crd.Name)
	}
	return wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			crd, err := crds.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			established := false
			for _, c := range crd.Status.Conditions {
				established = established || c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
			}
			if !established {
				return false, nil
			}
		}
		return true, nil
	})
}

func nestedText(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
