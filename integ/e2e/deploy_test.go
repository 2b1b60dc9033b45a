package e2e

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A first deploy creates a cluster owned by the application, sized to the job, and runs the job in
// Flink with the spec's parallelism and arguments, on the oldest and the newest Flink release.
func TestCreateRunsJobOnOwnedCluster(t *testing.T) {
	for _, version := range coreVersions {
		t.Run(version, func(t *testing.T) { createRunsJobOnOwnedCluster(t, version) })
	}
}

func createRunsJobOnOwnedCluster(t *testing.T, version string) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	app := s.createRunning("wordcount", func(spec *v1beta1.FlinkApplicationSpec) {
		onFlink(version, &spec.ClusterSpec)
		spec.Parallelism = 5 // with 2 slots per TaskManager: 3 TaskManagers, one slot spare
		spec.ProgramArgs = `--input "two words"`
	})
	hash := app.Status.DeployHash
	if got := s.jobManager(app).Release(); !strings.HasPrefix(got, version+".") {
		t.Errorf("the JobManager runs Flink %s, want %s", got, version)
	}

	wantOwner := metav1.OwnerReference{APIVersion: "flink.k8s.io/v1beta1", Kind: "FlinkApplication", Name: app.Name, UID: app.UID}
	checkOwner := func(kind, name string, refs []metav1.OwnerReference) {
		t.Helper()
		ctl := metav1.GetControllerOfNoCopy(&metav1.ObjectMeta{OwnerReferences: refs})
		if ctl == nil || ctl.APIVersion != wantOwner.APIVersion || ctl.Kind != wantOwner.Kind ||
			ctl.Name != wantOwner.Name || ctl.UID != wantOwner.UID {
			t.Errorf("%s %s: controller reference %+v, want the FlinkApplication %s (uid %s)", kind, name, ctl, app.Name, app.UID)
		}
	}
	deployments := map[string]int32{app.Name + "-" + hash + "-jm": 1, app.Name + "-" + hash + "-tm": 3}
	for name, replicas := range deployments {
		d, err := env.Kube.AppsV1().Deployments(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Deployment %s: %v", name, err)
		}
		checkOwner("Deployment", name, d.OwnerReferences)
		if d.Spec.Replicas == nil || *d.Spec.Replicas != replicas {
			t.Errorf("Deployment %s has %v replicas, want %d", name, d.Spec.Replicas, replicas)
		}
	}
	for _, name := range []string{app.Name + "-" + hash, app.Name} {
		svc, err := env.Kube.CoreV1().Services(s.ns).Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Service %s: %v", name, err)
		}
		checkOwner("Service", name, svc.OwnerReferences)
	}

	job := s.onlyJob(s.jobManager(app))
	if job.ID != app.Status.JobStatus.JobID {
		t.Errorf("Flink runs job %s, status records %s", job.ID, app.Status.JobStatus.JobID)
	}
	s.assertRunningJob(job, 5)
	if want := []string{"--input", "two words"}; !slices.Equal(job.Args, want) {
		t.Errorf("the job got arguments %q, want %q", job.Args, want)
	}
	if job.RestoredFrom != "" {
		t.Errorf("a first deploy without savepointPath restored from %q", job.RestoredFrom)
	}
	if n := len(s.timeline(app.Name)); n != 1 {
		t.Errorf("the simulator saw %d jobs of %s, want 1", n, app.Name)
	}
}
