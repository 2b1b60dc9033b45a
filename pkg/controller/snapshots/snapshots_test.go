package snapshots

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned/fake"
	"github.com/flinkfsm/flinkfsm/pkg/controller/guardian"
	"github.com/flinkfsm/flinkfsm/pkg/controller/jobstate"
)

// The snapshots package over a fake clientset: what each step writes, as cert-manager tests its
// controllers. The owner's pass as a whole is tested in pkg/controller/flinkapplication.

var at = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)

type event struct {
	warning        bool
	reason, detail string
}

// fixture is one owner's pass over a fake API server.
type fixture struct {
	t      *testing.T
	apps   *fake.Clientset
	owner  *metav1.ObjectMeta
	ledger []v1beta1.StateEntry
	events []event
}

func newFixture(t *testing.T, objects ...runtime.Object) *fixture {
	return &fixture{t: t, apps: fake.NewSimpleClientset(objects...),
		owner: &metav1.ObjectMeta{Namespace: "team", Name: "orders", UID: "0a1b2c3d-0000-0000-0000-000000000001"}}
}

func (f *fixture) pass() Pass {
	list, err := f.apps.FlinkV1beta1().FlinkSnapshots("team").List(context.Background(), metav1.ListOptions{})
	require.NoError(f.t, err)
	var snaps []*v1beta1.FlinkSnapshot
	for i := range list.Items {
		snaps = append(snaps, &list.Items[i])
	}
	return Pass{Owner: Owner{Kind: v1beta1.FlinkApplicationKind, Meta: f.owner}, Apps: f.apps, FieldManager: "test",
		Snapshots: snaps, Ledger: &f.ledger, Now: at,
		Announce: func(warning bool, reason, detail string) { f.events = append(f.events, event{warning, reason, detail}) }}
}

func (f *fixture) snapshot(name string) *v1beta1.FlinkSnapshot {
	s, err := f.apps.FlinkV1beta1().FlinkSnapshots("team").Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(f.t, err)
	return s
}

// verbs are the writes the fake API server saw, as "verb resource[/subresource]".
func (f *fixture) verbs() []string {
	var out []string
	for _, a := range f.apps.Actions() {
		if a.GetVerb() == "list" || a.GetVerb() == "get" {
			continue
		}
		r := a.GetResource().Resource
		if a.GetSubresource() != "" {
			r += "/" + a.GetSubresource()
		}
		out = append(out, a.GetVerb()+" "+r)
	}
	return out
}

func savepoint(jobID, trigger, path string, result v1beta1.StateResult, purpose v1beta1.SavepointPurpose) v1beta1.StateEntry {
	t := metav1.NewTime(at.Add(-time.Hour))
	return v1beta1.StateEntry{JobID: jobID, TriggerID: trigger, Path: path, Result: result, Purpose: purpose, TriggerTime: &t, Time: &t}
}

func TestSyncMakesAFlinkSnapshotOfEachEndedSavepointOnce(t *testing.T) {
	f := newFixture(t)
	f.ledger = []v1beta1.StateEntry{
		savepoint("job", "t1", "s3://sp/1", v1beta1.StateCompleted, v1beta1.SavepointUpgrade),
		savepoint("job", "t2", "", v1beta1.StatePending, v1beta1.SavepointManual),
		savepoint("job", "", "s3://cp/9", v1beta1.StateCompleted, v1beta1.StateCheckpoint),
	}
	Sync(context.Background(), f.pass(), map[string]string{"shard": "a"}, true)

	name := f.ledger[0].Snapshot
	require.NotEmpty(t, name, "the entry names the FlinkSnapshot it made, for the pass's status write")
	assert.Empty(t, f.ledger[1].Snapshot, "a pending savepoint is not shown yet")
	assert.Empty(t, f.ledger[2].Snapshot, "a checkpoint Flink took is recorded, not mirrored")
	s := f.snapshot(name)
	require.NotNil(t, s)
	assert.Equal(t, v1beta1.StateCompleted, s.Status.State)
	assert.Equal(t, "s3://sp/1", s.Status.Path)
	assert.Equal(t, "a", s.Labels["shard"], "the shard's labels, so that one outliving its owner stays in its shard")
	assert.Equal(t, "job/t1", s.Annotations[LedgerEntryAnnotation])
	assert.True(t, s.Spec.DisposeOnDelete, "retention disposes of what it retires")
	assert.Equal(t, []string{DisposeFinalizer}, s.Finalizers)
	assert.Equal(t, []string{"create flinksnapshots", "update flinksnapshots/status"}, f.verbs())

	f.apps.ClearActions()
	Sync(context.Background(), f.pass(), nil, true)
	assert.Empty(t, f.verbs(), "an entry that names its FlinkSnapshot, unchanged, writes nothing")
}

func TestSyncMakesAtMostThreeFlinkSnapshotsAPass(t *testing.T) {
	f := newFixture(t)
	for _, trigger := range []string{"a", "b", "c", "d", "e"} {
		f.ledger = append(f.ledger, savepoint("job", trigger, "s3://sp/"+trigger, v1beta1.StateCompleted, v1beta1.SavepointPeriodic))
	}
	Sync(context.Background(), f.pass(), nil, false)
	made := 0
	for _, e := range f.ledger {
		if e.Snapshot != "" {
			made++
		}
	}
	assert.Equal(t, 3, made)
}

func TestAFlinkSnapshotOfAnotherEntryUnderTheSameNameIsNotTakenOver(t *testing.T) {
	e := savepoint("job", "t1", "s3://sp/1", v1beta1.StateCompleted, v1beta1.SavepointUpgrade)
	owner := &metav1.ObjectMeta{Namespace: "team", Name: "orders"}
	other := Object(v1beta1.FlinkApplicationKind, owner, &e)
	other.Annotations[LedgerEntryAnnotation] = "another/entry"
	f := newFixture(t, other)
	f.ledger = []v1beta1.StateEntry{e}
	Sync(context.Background(), f.pass(), nil, false)
	assert.Empty(t, f.ledger[0].Snapshot)
	assert.Equal(t, "another/entry", f.snapshot(other.Name).Annotations[LedgerEntryAnnotation])
}

func TestObjectNamesFitTheAPIServersLimits(t *testing.T) {
	e := savepoint("job", "t1", "s3://sp/1", v1beta1.StateCompleted, v1beta1.SavepointUpgrade)
	long := strings.Repeat("a", 253)
	s := Object(v1beta1.FlinkApplicationKind, &metav1.ObjectMeta{Namespace: "team", Name: long}, &e)
	assert.LessOrEqual(t, len(s.Name), 253)
	assert.LessOrEqual(t, len(s.Labels[v1beta1.SnapshotOwnerLabel]), 63)
	assert.Equal(t, long, s.Spec.Owner.Name, "the owner's whole name is in the spec")
}

// madeFor is a completed savepoint FlinkSnapshot the operator made for the fixture's owner.
func madeFor(f *fixture, name, path string, age time.Duration) *v1beta1.FlinkSnapshot {
	taken := metav1.NewTime(at.Add(-age))
	jobID := jobstate.OwnerOf(v1beta1.FlinkApplicationKind, f.owner).NewJobID()
	return &v1beta1.FlinkSnapshot{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, UID: k8stypes.UID("uid-" + name),
			Annotations: map[string]string{LedgerEntryAnnotation: jobID + "/" + name}},
		Spec:   v1beta1.FlinkSnapshotSpec{Type: v1beta1.SnapshotSavepoint, Owner: v1beta1.SnapshotOwner{Kind: v1beta1.FlinkApplicationKind, Name: "orders"}},
		Status: v1beta1.FlinkSnapshotStatus{State: v1beta1.StateCompleted, Path: path, TriggerTime: &taken},
	}
}

// guardianNeeding is a guardian by which another object of the namespace needs these paths.
func guardianNeeding(paths ...string) func() (*guardian.Namespace, error) {
	return func() (*guardian.Namespace, error) {
		r := guardian.References{Holder: guardian.Holder{Kind: v1beta1.FlinkApplicationKind, Name: "payments", UID: "p"}}
		for _, p := range paths {
			r.Paths = append(r.Paths, guardian.Use{Name: p, Why: "its spec names it"})
		}
		return guardian.NewNamespace([]guardian.References{r}, nil), nil
	}
}

func TestRetainDeletesTheOldestPastKeepUnlessTheGuardianKeepsThem(t *testing.T) {
	f := newFixture(t)
	f.apps = fake.NewSimpleClientset(
		madeFor(f, "old", "s3://sp/old", 3*time.Hour),
		madeFor(f, "needed", "s3://sp/needed", 2*time.Hour),
		madeFor(f, "new", "s3://sp/new", time.Hour))
	kept := &Kept{}
	Retain(context.Background(), f.pass(), Retention{Keep: 1}, kept, "team/orders", guardianNeeding("s3://sp/needed"))

	assert.Nil(t, f.snapshot("old"), "past keep and needed by nothing")
	assert.NotNil(t, f.snapshot("needed"), "another object's spec names its savepoint")
	assert.NotNil(t, f.snapshot("new"))
	reasons := map[string]string{}
	for _, e := range f.events {
		reasons[e.reason] = e.detail
	}
	assert.Contains(t, reasons["StateKept"], "payments", "the Event names who needs it")
	assert.Contains(t, reasons["SnapshotRetired"], "FlinkSnapshot old")

	// The verdict is trusted for a while: the next pass asks no guardian and says nothing again.
	f.events = nil
	asked := false
	Retain(context.Background(), f.pass(), Retention{Keep: 1}, kept, "team/orders", func() (*guardian.Namespace, error) {
		asked = true
		return guardianNeeding()()
	})
	assert.False(t, asked)
	assert.Empty(t, f.events)
}

func TestRetainCountsOnlyTheFlinkSnapshotsMadeForThisVeryObject(t *testing.T) {
	f := newFixture(t)
	namesakes := madeFor(f, "namesakes", "s3://sp/namesake", 3*time.Hour)
	f.owner.UID = "0a1b2c3d-0000-0000-0000-000000000002" // the object was created again under its name
	f.apps = fake.NewSimpleClientset(namesakes, madeFor(f, "own", "s3://sp/own", time.Hour))
	Retain(context.Background(), f.pass(), Retention{Keep: 1, MaxAge: time.Minute}, &Kept{}, "team/orders", guardianNeeding())
	assert.NotNil(t, f.snapshot("namesakes"), "the deleted namesake's savepoint is not this object's to retire")
	assert.Nil(t, f.snapshot("own"), "past maxAge")
}

func TestRetainWithoutTheGuardianRetiresNothing(t *testing.T) {
	f := newFixture(t)
	f.apps = fake.NewSimpleClientset(madeFor(f, "old", "s3://sp/old", 3*time.Hour), madeFor(f, "new", "s3://sp/new", time.Hour))
	Retain(context.Background(), f.pass(), Retention{Keep: 1}, &Kept{}, "team/orders", func() (*guardian.Namespace, error) {
		return nil, apierrors.NewServiceUnavailable("cache not synced")
	})
	assert.NotNil(t, f.snapshot("old"))
}

// deleted is a FlinkSnapshot a user deleted, held for the disposal of its storage.
func deleted(f *fixture, name, path string) *v1beta1.FlinkSnapshot {
	s := madeFor(f, name, path, time.Hour)
	now := metav1.NewTime(at)
	s.DeletionTimestamp, s.Finalizers, s.Spec.DisposeOnDelete = &now, []string{DisposeFinalizer}, true
	return s
}

func TestADeletedFlinkSnapshotWaitsForAJobManagerToDisposeOfItsStorage(t *testing.T) {
	f := newFixture(t)
	f.apps = fake.NewSimpleClientset(deleted(f, "gone", "s3://sp/gone"))
	f.ledger = []v1beta1.StateEntry{savepoint("job", "t1", "s3://sp/gone", v1beta1.StateCompleted, v1beta1.SavepointManual)}
	Answer(context.Background(), f.pass(), "Running", Disposal{Guardian: guardianNeeding()})
	assert.Contains(t, f.snapshot("gone").Status.Error, "waiting for a running JobManager of FlinkApplication orders")
	assert.Equal(t, []string{DisposeFinalizer}, f.snapshot("gone").Finalizers)

	var disposed []string
	Answer(context.Background(), f.pass(), "Running", Disposal{Guardian: guardianNeeding(),
		Dispose: func(path string) error { disposed = append(disposed, path); return nil }})
	assert.Equal(t, []string{"s3://sp/gone"}, disposed)
	assert.Empty(t, f.snapshot("gone").Finalizers, "disposed of, it goes")
	assert.Empty(t, f.ledger, "the ledger forgets the state with its storage, so that no restore picks it")
}

func TestTheStorageOfADeletedFlinkSnapshotAnotherObjectNeedsStays(t *testing.T) {
	f := newFixture(t)
	f.apps = fake.NewSimpleClientset(deleted(f, "gone", "s3://sp/needed"))
	Answer(context.Background(), f.pass(), "Running", Disposal{Guardian: guardianNeeding("s3://sp/needed"),
		Dispose: func(path string) error { t.Fatalf("disposed of %s, which payments needs", path); return nil }})
	assert.Empty(t, f.snapshot("gone").Finalizers, "the object goes, its storage stays")
	require.Len(t, f.events, 1)
	assert.Equal(t, "SnapshotKept", f.events[0].reason)
}

func TestDisposalsOfOnePassAreBounded(t *testing.T) {
	f := newFixture(t)
	var objects []runtime.Object
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		objects = append(objects, deleted(f, n, "s3://sp/"+n))
	}
	f.apps = fake.NewSimpleClientset(objects...)
	calls := 0
	Answer(context.Background(), f.pass(), "Running", Disposal{Guardian: guardianNeeding(),
		Dispose: func(string) error { calls++; return nil }})
	assert.Equal(t, disposalsPerPass, calls)
}

func TestRestorePathSaysWhatItWaitsFor(t *testing.T) {
	lookup := func(snaps ...*v1beta1.FlinkSnapshot) Lookup {
		return func(namespace, name string) (*v1beta1.FlinkSnapshot, error) {
			for _, s := range snaps {
				if s.Name == name {
					return s, nil
				}
			}
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "flinksnapshots"}, name)
		}
	}
	f := newFixture(t)
	done := madeFor(f, "done", "s3://sp/done", time.Hour)
	pending := madeFor(f, "pending", "", time.Hour)
	pending.Status.State = v1beta1.StatePending
	going := deleted(f, "going", "s3://sp/going")
	for name, want := range map[string]string{"missing": "does not exist", "pending": "not Completed yet", "going": "being deleted"} {
		path, waiting := RestorePath(lookup(done, pending, going), "team", name)
		assert.Empty(t, path, name)
		assert.Contains(t, waiting, want, name)
	}
	path, waiting := RestorePath(lookup(done), "team", "done")
	assert.Equal(t, "s3://sp/done", path)
	assert.Empty(t, waiting)
}
