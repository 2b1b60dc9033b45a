package realflink

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flinkfsm/flinkfsm/integ/localenv"
	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink/client"
)

// FlinkSnapshots on real Flink: two savepoints asked for by object; another application created
// from the first (restoreSnapshot) and the application redeployed from it (with a
// savepointRedeployNonce) each go on with exactly the state it held; deleting the second, which
// nothing needs, disposes of its storage through Flink; deleting the first, which the running jobs'
// restores still name, leaves its storage where it is.
func TestFlinkSnapshotsAreTakenRestoredAndDisposedOfOnRealFlink(t *testing.T) {
	env, fleet, releases := operatorOnRealFlink(t)
	for _, r := range releases {
		t.Run(r.name, func(t *testing.T) { snapshotLifecycle(t, env, fleet, r) })
	}
}

func snapshotLifecycle(t *testing.T, env *localenv.Env, fleet *Fleet, r realRelease) {
	ctx := context.Background()
	began := time.Now()
	ns := realNamespace(t, env)
	out := t.TempDir()
	app := lyftManifest(t, ns, r, out)
	app.Name = "snapshots"
	s := &lifecycle{t: t, env: env, fleet: fleet, ns: ns, name: app.Name, out: out, api: client.New(client.DefaultConfig(), nil)}
	apps := env.Apps.FlinkV1beta1().FlinkApplications(ns)
	s.create(app)
	job := s.awaitNewJob("", "")
	s.awaitCheckpoints(job, 2)

	first := s.takeSnapshot("first")
	s.awaitCheckpoints(job, 4)
	second := s.takeSnapshot("second")
	for _, p := range []string{first, second} {
		if _, err := os.Stat(localPath(p)); err != nil {
			t.Fatalf("savepoint %s is not on the node: %v", p, err)
		}
	}

	// Another application starts from the first: exactly the state it held.
	copyOut := t.TempDir()
	other := lyftManifest(t, ns, r, copyOut)
	other.Name = "snapshots-copy"
	other.Spec.RestoreSnapshot = "first"
	if _, err := apps.Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := &lifecycle{t: t, env: env, fleet: fleet, ns: ns, name: other.Name, out: copyOut, api: s.api}
	copied := c.awaitNewJob("", "")
	if copied.restored == nil || copied.restored.ExternalPath != first {
		t.Fatalf("application %s's job %s restored %+v; want savepoint %s of FlinkSnapshot first", other.Name, copied.id, copied.restored, first)
	}
	held, err := ReadJobOutput(out, job.id)
	if err != nil {
		t.Fatal(err)
	}
	from, ok := held.ResumePosition(copied.restored.ID)
	if !ok {
		t.Fatalf("job %s wrote no position for savepoint %d", job.id, copied.restored.ID)
	}
	copyOutput, err := ReadJobOutput(copyOut, copied.id)
	if err != nil {
		t.Fatal(err)
	}
	copyUpTo, _ := copyOutput.ResumePosition(copied.later.ID)
	check(t, copyOutput.CheckCounts(testKeys), copyOutput.CheckExactlyFrom(from, copyUpTo))

	// The redeploy from the first: the job goes back to exactly what it held.
	s.update(func(a *v1beta1.FlinkApplication) {
		a.Spec.RestoreSnapshot = "first"
		a.Spec.SavepointRedeployNonce = "1"
	})
	redeployed := s.awaitNewJob(job.id, "")
	if redeployed.restored == nil || redeployed.restored.ExternalPath != first {
		t.Fatalf("the redeployed job %s restored %+v; want savepoint %s of FlinkSnapshot first", redeployed.id, redeployed.restored, first)
	}
	before, err := ReadJobOutput(out, job.id)
	if err != nil {
		t.Fatal(err)
	}
	resume, ok := before.ResumePosition(redeployed.restored.ID)
	if !ok {
		t.Fatalf("job %s wrote no position for savepoint %d", job.id, redeployed.restored.ID)
	}
	after, err := ReadJobOutput(out, redeployed.id)
	if err != nil {
		t.Fatal(err)
	}
	upTo, _ := after.ResumePosition(redeployed.later.ID)
	check(t, after.CheckCounts(testKeys), after.CheckExactlyFrom(resume, upTo))

	// The second, needed by nothing, is disposed of with its object.
	snapshots := env.Apps.FlinkV1beta1().FlinkSnapshots(ns)
	if err := snapshots.Delete(ctx, "second", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "FlinkSnapshot second gone", func() (bool, error) {
		_, err := snapshots.Get(ctx, "second", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := os.Stat(localPath(second)); !os.IsNotExist(err) {
		t.Errorf("savepoint %s of the deleted FlinkSnapshot second is still on the node (%v); want it disposed of", second, err)
	}
	// The first is what the running job restored: its storage stays when its object goes.
	if err := snapshots.Delete(ctx, "first", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "FlinkSnapshot first gone", func() (bool, error) {
		_, err := snapshots.Get(ctx, "first", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := os.Stat(localPath(first)); err != nil {
		t.Errorf("savepoint %s, which the running job restored, is gone with its FlinkSnapshot: %v", first, err)
	}
	t.Logf("Flink %s: two FlinkSnapshots, a redeploy and two deletes in %s", r.dist.Version, time.Since(began).Round(time.Second))

	for _, name := range []string{app.Name, other.Name} {
		if err := apps.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 3*time.Minute, "every process of "+name+" ended", func() (bool, error) {
			return fleet.processesOf(ns, name) == 0, nil
		})
	}
}

// takeSnapshot asks for a savepoint of the application by a FlinkSnapshot that disposes of it when
// deleted, and returns its path once completed.
func (s *lifecycle) takeSnapshot(name string) string {
	s.t.Helper()
	snapshots := s.env.Apps.FlinkV1beta1().FlinkSnapshots(s.ns)
	_, err := snapshots.Create(context.Background(), &v1beta1.FlinkSnapshot{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
		Spec: v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: "FlinkApplication", Name: s.name},
			Type: v1beta1.SnapshotSavepoint, DisposeOnDelete: true}}, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	var path string
	eventually(s.t, 2*time.Minute, "FlinkSnapshot "+name+" completed", func() (bool, error) {
		got, err := snapshots.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got.Status.State == v1beta1.StateFailed {
			s.t.Fatalf("FlinkSnapshot %s failed: %s", name, got.Status.Error)
		}
		path = got.Status.Path
		return got.Status.State == v1beta1.StateCompleted && path != "", nil
	})
	s.t.Logf("FlinkSnapshot %s: %s", name, path)
	return path
}

// localPath is where a savepoint Flink reports by URI lies on this machine (the fleet's processes
// write hostPath volumes under its own directory, and report those paths).
func localPath(uri string) string {
	return strings.TrimPrefix(strings.TrimPrefix(uri, "file://"), "file:")
}
