package cli

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	appfake "github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/fake"
)

// apiServer is a fake clientset that names the objects created with a generateName, as the API
// server does: the object tracker alone would store them all under the empty name.
func apiServer(objects ...runtime.Object) *appfake.Clientset {
	c := appfake.NewSimpleClientset(objects...)
	n := 0
	c.PrependReactor("create", "flinksnapshots", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s := a.(k8stesting.CreateAction).GetObject().(*v1beta1.FlinkSnapshot)
		if s.Name == "" && s.GenerateName != "" {
			n++ // the fake holds its lock while reactors run
			s.Name = fmt.Sprintf("%s%05d", s.GenerateName, n)
		}
		return false, nil, nil
	})
	return c
}

// snapshotsIn are the FlinkSnapshots of the tests' namespace.
func snapshotsIn(t *testing.T, c *appfake.Clientset) []v1beta1.FlinkSnapshot {
	t.Helper()
	l, err := c.FlinkV1beta1().FlinkSnapshots("jobs").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	return l.Items
}

// playOperator plays the operator for the first FlinkSnapshot created in the namespace: once it
// appears, each step acts on it in turn, 300ms apart.
func playOperator(ctx context.Context, c *appfake.Clientset, steps ...func(*v1beta1.FlinkSnapshot)) {
	go func() {
		var s *v1beta1.FlinkSnapshot
		for s == nil {
			if ctx.Err() != nil {
				return
			}
			if l, err := c.FlinkV1beta1().FlinkSnapshots("jobs").List(ctx, metav1.ListOptions{}); err == nil && len(l.Items) > 0 {
				s = &l.Items[0]
			} else {
				time.Sleep(50 * time.Millisecond)
			}
		}
		for _, step := range steps {
			if ctx.Err() != nil {
				return
			}
			step(s)
			time.Sleep(300 * time.Millisecond)
		}
	}()
}

// status is an operator's step that writes the snapshot's status.
func status(ctx context.Context, c *appfake.Clientset, st v1beta1.FlinkSnapshotStatus) func(*v1beta1.FlinkSnapshot) {
	return func(s *v1beta1.FlinkSnapshot) {
		s.Status = st
		_, _ = c.FlinkV1beta1().FlinkSnapshots("jobs").UpdateStatus(ctx, s, metav1.UpdateOptions{})
	}
}

// pause is an operator's step that does nothing for a while: longer than the plugin's poll, so that
// it sees the step before.
func pause(d time.Duration) func(*v1beta1.FlinkSnapshot) {
	return func(*v1beta1.FlinkSnapshot) { time.Sleep(d) }
}

func pending() v1beta1.FlinkSnapshotStatus {
	now := metav1.Now()
	return v1beta1.FlinkSnapshotStatus{State: v1beta1.StatePending, Purpose: v1beta1.SavepointManual, JobID: "0123", TriggerID: "t1", TriggerTime: &now}
}

// Each flag lands in the FlinkSnapshot's spec, and the owner's labels are on it from the start.
func TestSavepointCreatesAFlinkSnapshotOfTheFlags(t *testing.T) {
	etl := &v1beta1.FlinkSessionJob{ObjectMeta: metav1.ObjectMeta{Name: "etl", Namespace: "jobs"}}
	app := v1beta1.SnapshotOwner{Kind: "FlinkApplication", Name: "wc"}
	cases := []struct {
		args                []string
		name, generateName  string
		spec                v1beta1.FlinkSnapshotSpec
		ownerKind, ownerTag string
	}{
		{args: []string{"wc"}, generateName: "wc-manual-",
			spec: v1beta1.FlinkSnapshotSpec{Owner: app, Type: v1beta1.SnapshotSavepoint}},
		{args: []string{"wc", "--checkpoint"}, generateName: "wc-manual-",
			spec: v1beta1.FlinkSnapshotSpec{Owner: app, Type: v1beta1.SnapshotCheckpoint}},
		{args: []string{"wc", "--format", "native"}, generateName: "wc-manual-",
			spec: v1beta1.FlinkSnapshotSpec{Owner: app, Type: v1beta1.SnapshotSavepoint, FormatType: v1beta1.SavepointFormatNative}},
		{args: []string{"wc", "--format", "Canonical"}, generateName: "wc-manual-",
			spec: v1beta1.FlinkSnapshotSpec{Owner: app, Type: v1beta1.SnapshotSavepoint, FormatType: v1beta1.SavepointFormatCanonical}},
		{args: []string{"wc", "--dispose-on-delete", "--keep"}, generateName: "wc-manual-",
			spec: v1beta1.FlinkSnapshotSpec{Owner: app, Type: v1beta1.SnapshotSavepoint, DisposeOnDelete: true, Keep: true}},
		{args: []string{"wc", "--name", "before-upgrade"}, name: "before-upgrade",
			spec: v1beta1.FlinkSnapshotSpec{Owner: app, Type: v1beta1.SnapshotSavepoint}},
		{args: []string{"fsj/etl", "--checkpoint"}, generateName: "etl-manual-",
			spec: v1beta1.FlinkSnapshotSpec{Owner: v1beta1.SnapshotOwner{Kind: "FlinkSessionJob", Name: "etl"}, Type: v1beta1.SnapshotCheckpoint}},
	}
	for _, tc := range cases {
		c := apiServer(runningApp(), etl)
		args := append([]string{"savepoint", "--no-wait"}, tc.args...)
		code, _, errOut := run(t, c, args...)
		require.Equal(t, ExitOK, code, "%v: %s", tc.args, errOut)
		got := snapshotsIn(t, c)
		require.Len(t, got, 1, tc.args)
		s := got[0]
		assert.Equal(t, tc.spec, s.Spec, tc.args)
		assert.Equal(t, tc.generateName, s.GenerateName, tc.args)
		if tc.name != "" {
			assert.Equal(t, tc.name, s.Name, tc.args)
		}
		assert.Equal(t, map[string]string{v1beta1.SnapshotOwnerKindLabel: tc.spec.Owner.Kind, v1beta1.SnapshotOwnerLabel: tc.spec.Owner.Name}, s.Labels, tc.args)
	}
}

// Flags the API or the nonce cannot honour, an owner that is not there and a name that is taken
// are refused before anything is written.
func TestSavepointRefusesWhatCannotBeTaken(t *testing.T) {
	taken := &v1beta1.FlinkSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "jobs"}}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"wc", "--checkpoint", "--format", "native"}, "--format is a savepoint's"},
		{[]string{"wc", "--format", "zstd"}, `--format "zstd"`},
		{[]string{"wc", "--nonce", "--keep"}, "--keep needs a FlinkSnapshot"},
		{[]string{"wc", "--nonce", "--checkpoint"}, "--checkpoint needs a FlinkSnapshot"},
		{[]string{"gone"}, "FlinkApplication jobs/gone not found"},
		{[]string{"wc", "--name", "mine"}, "FlinkSnapshot jobs/mine already exists"},
	} {
		c := apiServer(runningApp(), taken.DeepCopy())
		code, _, errOut := run(t, c, append([]string{"savepoint", "--no-wait"}, tc.args...)...)
		assert.Equal(t, ExitError, code, tc.args)
		assert.Contains(t, errOut, tc.want, tc.args)
		assert.Len(t, snapshotsIn(t, c), 1, "%v: only the FlinkSnapshot that was there", tc.args)
		app, _ := c.FlinkV1beta1().FlinkApplications("jobs").Get(context.Background(), "wc", metav1.GetOptions{})
		assert.Empty(t, app.Spec.SavepointTriggerNonce, tc.args)
	}
}

// --no-wait returns with the FlinkSnapshot's name on stdout, before the operator took it.
func TestSavepointNoWaitPrintsTheName(t *testing.T) {
	c := apiServer(runningApp())
	code, out, errOut := run(t, c, "savepoint", "wc", "--no-wait", "--timeout", "1s")
	require.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, "wc-manual-00001\n", out)
	assert.Contains(t, errOut, "created FlinkSnapshot jobs/wc-manual-00001 (Savepoint of FlinkApplication jobs/wc)")
}

// The plugin follows its FlinkSnapshot, not the owner: Pending on stderr as it comes, the path on
// stdout once it completed; the owner's spec is not touched.
func TestSavepointFollowsItsFlinkSnapshotToCompleted(t *testing.T) {
	c := apiServer(runningApp())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := pending()
	done.State, done.Path = v1beta1.StateCompleted, "s3://b/savepoints/savepoint-0123-1"
	playOperator(ctx, c, status(ctx, c, pending()), pause(1500*time.Millisecond), status(ctx, c, done))
	code, out, errOut := run(t, c, "savepoint", "wc", "--timeout", "8s")
	require.Equal(t, ExitOK, code, errOut)
	assert.Equal(t, "s3://b/savepoints/savepoint-0123-1\n", out)
	assert.Contains(t, errOut, "created FlinkSnapshot jobs/wc-manual-00001 (Savepoint of FlinkApplication jobs/wc); waiting for it")
	assert.Contains(t, errOut, "FlinkSnapshot jobs/wc-manual-00001: state Pending, trigger t1")
	app, _ := c.FlinkV1beta1().FlinkApplications("jobs").Get(ctx, "wc", metav1.GetOptions{})
	assert.Empty(t, app.Spec.SavepointTriggerNonce, "a FlinkSnapshot, not the nonce")
}

// A snapshot that fails ends the command at once with the operator's reason.
func TestSavepointEndsWhenItsFlinkSnapshotFails(t *testing.T) {
	c := apiServer(runningApp())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	failed := pending()
	failed.State, failed.Error = v1beta1.StateFailed, "Flink refused the savepoint: no savepoint directory"
	playOperator(ctx, c, status(ctx, c, pending()), status(ctx, c, failed))
	code, out, errOut := run(t, c, "savepoint", "wc", "--timeout", "8s")
	assert.Equal(t, ExitFailed, code, "it ends when the snapshot fails, not at its timeout: %s", errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "FlinkSnapshot jobs/wc-manual-00001 failed: Flink refused the savepoint: no savepoint directory")
}

// A FlinkSnapshot deleted while followed ends the command: removed outright, or held by the
// operator's finalizer while it disposes of the storage.
func TestSavepointEndsWhenItsFlinkSnapshotIsDeleted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := apiServer(runningApp())
	playOperator(ctx, c, status(ctx, c, pending()), func(s *v1beta1.FlinkSnapshot) {
		_ = c.FlinkV1beta1().FlinkSnapshots("jobs").Delete(ctx, s.Name, metav1.DeleteOptions{})
	})
	code, _, errOut := run(t, c, "savepoint", "wc", "--timeout", "8s")
	assert.Equal(t, ExitFailed, code, errOut)
	assert.Contains(t, errOut, "FlinkSnapshot jobs/wc-manual-00001 was deleted before the snapshot ended")

	c = apiServer(runningApp())
	playOperator(ctx, c, status(ctx, c, pending()), func(s *v1beta1.FlinkSnapshot) {
		now := metav1.Now()
		s.DeletionTimestamp, s.Finalizers = &now, []string{"flink.k8s.io/dispose"}
		_, _ = c.FlinkV1beta1().FlinkSnapshots("jobs").Update(ctx, s, metav1.UpdateOptions{})
	})
	code, _, errOut = run(t, c, "savepoint", "wc", "--timeout", "8s")
	assert.Equal(t, ExitFailed, code, errOut)
	assert.Contains(t, errOut, "FlinkSnapshot jobs/wc-manual-00001 is being deleted")
}

// At the timeout the FlinkSnapshot stays, and the message says how to keep following it.
func TestSavepointTimesOutNamingItsFlinkSnapshot(t *testing.T) {
	c := apiServer(runningApp())
	code, out, errOut := run(t, c, "savepoint", "wc", "--timeout", "1500ms")
	assert.Equal(t, ExitTimeout, code, errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "FlinkSnapshot jobs/wc-manual-00001 did not end within 1.5s (not yet taken up by the operator)")
	assert.Contains(t, errOut, "kubectl get fsnap wc-manual-00001 -n jobs")
	assert.Len(t, snapshotsIn(t, c), 1)
}

// What the cluster cannot do ends the command at once, with what to do about it: a cluster without
// the FlinkSnapshot resource (an older operator) points at --nonce, and a FlinkSnapshot the user may
// create but not read is not waited for until the timeout.
func TestSavepointSaysWhatTheClusterCannotDo(t *testing.T) {
	c := apiServer(runningApp())
	c.PrependReactor("create", "flinksnapshots", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "flink.k8s.io", Resource: "flinksnapshots"}, "")
	})
	code, _, errOut := run(t, c, "savepoint", "wc", "--timeout", "8s")
	assert.Equal(t, ExitError, code, errOut)
	assert.Contains(t, errOut, "use --nonce")

	c = apiServer(runningApp())
	c.PrependReactor("get", "flinksnapshots", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "flink.k8s.io", Resource: "flinksnapshots"}, "wc-manual-00001", errors.New("RBAC"))
	})
	code, _, errOut = run(t, c, "savepoint", "wc", "--timeout", "8s")
	assert.Equal(t, ExitError, code, "not the timeout's: %s", errOut)
	assert.Contains(t, errOut, "reading FlinkSnapshot jobs/wc-manual-00001")
}
