package e2e

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// FlinkSnapshots on the local cluster: `kubectl flink savepoint` creates one and follows it to its
// path; the operator makes one for each savepoint it takes and labels it; retention retires its
// older ones but keeps one marked keep; deleting one with disposeOnDelete removes the storage; and
// another application starts from one by name.
func TestSnapshotsAreObjectsToListKeepDisposeAndRestoreFrom(t *testing.T) {
	defer stopEnvOnPanic()
	t.Parallel()
	s := newScenario(t)
	app := s.createRunning("orders", func(spec *v1beta1.FlinkApplicationSpec) {
		checkpointing(spec)
		spec.SavepointRetention = &v1beta1.SavepointRetention{Keep: 1}
	})

	// The plugin creates a FlinkSnapshot and prints its path once the operator took it.
	path := strings.TrimSpace(s.pluginOK("savepoint", app.Name, "--name", "orders-handover", "--timeout", "90s"))
	handover := s.snapshot("orders-handover")
	if handover.Status.State != v1beta1.StateCompleted || handover.Status.Path != path || !env.Fleet.Storage().Exists(path) {
		t.Fatalf("orders-handover: %+v, printed %q", handover.Status, path)
	}
	disposable := strings.TrimSpace(s.pluginOK("savepoint", app.Name, "--name", "orders-scratch", "--dispose-on-delete", "--timeout", "90s"))

	// Two savepoints by nonce and an upgrade: three FlinkSnapshots of the operator's, of which
	// retention (keep 1) leaves the newest and the one kept on purpose.
	s.update(app.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.SavepointTriggerNonce = "first" })
	s.eventually("the first nonce's FlinkSnapshot", func() (bool, string) {
		return len(s.snapshotsOf(app.Name, v1beta1.SavepointManual, true)) == 1, "none yet"
	})
	kept := s.snapshotsOf(app.Name, v1beta1.SavepointManual, true)[0]
	// The operator may write the snapshot's status meanwhile: read it again on a conflict, as a
	// user's kubectl edit would.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got, err := env.Apps.FlinkV1beta1().FlinkSnapshots(s.ns).Get(s.ctx, kept.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got.Spec.Keep = true
		_, err = env.Apps.FlinkV1beta1().FlinkSnapshots(s.ns).Update(s.ctx, got, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	s.update(app.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.SavepointTriggerNonce = "second" })
	s.eventually("the second nonce's FlinkSnapshot", func() (bool, string) {
		return len(s.snapshotsOf(app.Name, v1beta1.SavepointManual, true)) >= 2, "one"
	})
	s.update(app.Name, func(spec *v1beta1.FlinkApplicationSpec) { spec.Image = "flinkfsm.test/wordcount:v2" })
	upgraded := s.waitRunning(app.Name, app.Status.DeployHash)
	s.eventually("retention leaves the upgrade's and the kept one", func() (bool, string) {
		var names []string
		for _, sn := range s.snapshotsOf(app.Name, "", true) {
			names = append(names, sn.Name+"="+string(sn.Status.Purpose))
		}
		upgrade := s.snapshotsOf(app.Name, v1beta1.SavepointUpgrade, true)
		ok := len(names) == 2 && len(upgrade) == 1 && upgrade[0].Status.Path == upgraded.Status.JobStatus.RestorePath &&
			s.snapshot(kept.Name) != nil
		return ok, strings.Join(names, ", ")
	})
	if s.snapshot("orders-handover") == nil {
		t.Fatal("retention deleted a FlinkSnapshot a user created")
	}

	// Deleting the scratch snapshot disposes of its storage, through the running JobManager.
	if err := env.Apps.FlinkV1beta1().FlinkSnapshots(s.ns).Delete(s.ctx, "orders-scratch", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.eventually("orders-scratch disposed of and gone", func() (bool, string) {
		gone := s.snapshot("orders-scratch") == nil
		return gone && !env.Fleet.Storage().Exists(disposable), "still there"
	})

	// Another application starts from the handover snapshot by name.
	copied := s.createRunning("orders-replay", func(spec *v1beta1.FlinkApplicationSpec) { spec.RestoreSnapshot = "orders-handover" })
	if copied.Status.JobStatus.RestorePath != path {
		t.Fatalf("orders-replay restored from %q, want the handover snapshot's %q", copied.Status.JobStatus.RestorePath, path)
	}
	if job := s.onlyJob(s.jobManager(copied)); job.RestoredFrom != path {
		t.Fatalf("Flink ran orders-replay's job from %q, want %q", job.RestoredFrom, path)
	}
}

// snapshot is the FlinkSnapshot of that name, nil when there is none.
func (s *scenario) snapshot(name string) *v1beta1.FlinkSnapshot {
	sn, err := env.Apps.FlinkV1beta1().FlinkSnapshots(s.ns).Get(s.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return sn
}

// snapshotsOf lists an application's FlinkSnapshots by label, of one purpose ("" for any), and
// only those the operator made when operators is set.
func (s *scenario) snapshotsOf(owner string, purpose v1beta1.SavepointPurpose, operators bool) []v1beta1.FlinkSnapshot {
	s.t.Helper()
	selector := v1beta1.SnapshotOwnerKindLabel + "=FlinkApplication," + v1beta1.SnapshotOwnerLabel + "=" + owner
	if purpose != "" {
		selector += "," + v1beta1.SnapshotPurposeLabel + "=" + string(purpose)
	}
	list, err := env.Apps.FlinkV1beta1().FlinkSnapshots(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		s.t.Fatal(err)
	}
	var out []v1beta1.FlinkSnapshot
	for _, sn := range list.Items {
		if !operators || sn.Annotations["flink.k8s.io/ledger-entry"] != "" {
			out = append(out, sn)
		}
	}
	return out
}
