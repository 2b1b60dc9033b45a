package checkpointbook

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var now = time.Date(2026, 11, 27, 12, 5, 0, 0, time.UTC)

func entry(job string, n int) Entry {
	return Entry{JobID: job, Path: fmt.Sprintf("s3://b/%s/chk-%d", job, n), At: time.Date(2026, 11, 27, 12, 0, n, 0, time.UTC)}
}

func page(t *testing.T, kube *kubefake.Clientset, k Key) *corev1.ConfigMap {
	t.Helper()
	cm, err := kube.CoreV1().ConfigMaps(k.Namespace).Get(context.Background(), PageName(k), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	return cm
}

func TestABookWritesEachPageOnceAFlushWithEveryEntryNotedSince(t *testing.T) {
	kube := kubefake.NewClientset()
	b := New(kube, nil)
	var keys []Key
	for i := 0; i < 40; i++ {
		k := Key{Namespace: "team-a", Kind: "FlinkApplication", Name: fmt.Sprintf("app-%d", i)}
		keys = append(keys, k)
		require.True(t, b.Note(k, entry(fmt.Sprintf("job%d", i), 1), now))
		assert.True(t, b.Unwritten(k))
	}
	pages, err := b.Flush(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 4, pages, "40 jobs of one namespace are four writes, not forty")
	for i, k := range keys {
		e, ok := Read(page(t, kube, k), k)
		require.True(t, ok, k.Name)
		assert.Equal(t, entry(fmt.Sprintf("job%d", i), 1), e)
		assert.False(t, b.Unwritten(k))
	}
	assert.Equal(t, "true", page(t, kube, keys[0]).Labels[Label])

	// The next flush patches only what was noted since, and keeps the rest of the page.
	kube.ClearActions()
	require.True(t, b.Note(keys[0], entry("job0", 2), now))
	pages, err = b.Flush(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, pages)
	require.Len(t, kube.Actions(), 1)
	assert.Equal(t, "patch", kube.Actions()[0].GetVerb())
	e, _ := Read(page(t, kube, keys[0]), keys[0])
	assert.Equal(t, entry("job0", 2), e)
	for _, k := range keys[1:] {
		_, ok := Read(page(t, kube, k), k)
		assert.True(t, ok, k.Name)
	}
	pages, err = b.Flush(context.Background())
	require.NoError(t, err)
	assert.Zero(t, pages, "nothing noted, nothing written")
}

func TestAPageThatFailsKeepsItsEntriesForTheNextFlushAndLeavesTheOthers(t *testing.T) {
	kube := kubefake.NewClientset()
	failing := true
	refuseTeamB := func(a k8stesting.Action) (bool, runtime.Object, error) {
		if failing && a.GetNamespace() == "team-b" {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("no"))
		}
		return false, nil, nil
	}
	kube.PrependReactor("patch", "configmaps", refuseTeamB)
	kube.PrependReactor("create", "configmaps", refuseTeamB)
	b := New(kube, nil)
	a := Key{Namespace: "team-a", Kind: "FlinkApplication", Name: "a"}
	bad := Key{Namespace: "team-b", Kind: "FlinkApplication", Name: "b"}
	b.Note(a, entry("ja", 1), now)
	b.Note(bad, entry("jb", 1), now)
	_, err := b.Flush(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "team-b")
	assert.False(t, b.Unwritten(a), "another namespace's failure does not hold this one's")
	assert.True(t, b.Unwritten(bad))
	_, overdue := b.Overdue(bad, now.Add(10*time.Second), 20*time.Second)
	assert.False(t, overdue, "not yet: the next flush may write it")
	e, overdue := b.Overdue(bad, now.Add(30*time.Second), 20*time.Second)
	assert.True(t, overdue)
	assert.Equal(t, entry("jb", 1), e)

	failing = false
	_, err = b.Flush(context.Background())
	require.NoError(t, err)
	assert.False(t, b.Unwritten(bad))
	e, ok := Read(page(t, kube, bad), bad)
	require.True(t, ok)
	assert.Equal(t, entry("jb", 1), e)
}

func TestABookThatMayNotActWritesNothing(t *testing.T) {
	kube := kubefake.NewClientset()
	b := New(kube, func() error { return errors.New("lease not surely held") })
	k := Key{Namespace: "n", Kind: "FlinkApplication", Name: "a"}
	b.Note(k, entry("j", 1), now)
	_, err := b.Flush(context.Background())
	require.Error(t, err)
	assert.Empty(t, kube.Actions())
	assert.True(t, b.Unwritten(k))
}

func TestNewestIsTheNewerOfWhatWasNotedAndWhatThePageHolds(t *testing.T) {
	kube := kubefake.NewClientset()
	k := Key{Namespace: "n", Kind: "FlinkApplication", Name: "a"}
	writer := New(kube, nil)
	writer.Note(k, entry("j", 5), now)
	_, err := writer.Flush(context.Background())
	require.NoError(t, err)
	p := page(t, kube, k)

	// A new process has noted nothing: the page is what it knows.
	fresh := New(kube, nil)
	e, ok := fresh.Newest(k, p)
	require.True(t, ok)
	assert.Equal(t, entry("j", 5), e)
	fresh.Note(k, entry("j", 6), now)
	e, _ = fresh.Newest(k, p)
	assert.Equal(t, entry("j", 6), e)
	// A cache that has caught up with a newer write than the note wins.
	writer.Note(k, entry("j", 9), now)
	_, err = writer.Flush(context.Background())
	require.NoError(t, err)
	e, _ = fresh.Newest(k, page(t, kube, k))
	assert.Equal(t, entry("j", 9), e)
}

func TestForgetRemovesAnEntryOnlyOfItsJob(t *testing.T) {
	kube := kubefake.NewClientset()
	b := New(kube, nil)
	gone := Key{Namespace: "n", Kind: "FlinkApplication", Name: "gone"}
	stays := Key{Namespace: "n", Kind: "FlinkSessionJob", Name: "gone"}
	b.Note(gone, entry("j1", 1), now)
	b.Note(stays, entry("j2", 1), now)
	_, err := b.Flush(context.Background())
	require.NoError(t, err)

	later := New(kube, nil)
	later.Forget(gone, page(t, kube, gone))
	_, err = later.Flush(context.Background())
	require.NoError(t, err)
	_, ok := Read(page(t, kube, gone), gone)
	assert.False(t, ok)
	_, ok = Read(page(t, kube, stays), stays)
	assert.True(t, ok, "a session job of the same name is another entry")
	if PageName(gone) != PageName(stays) {
		assert.Nil(t, page(t, kube, gone), "a page left empty goes")
	}
	later.Forget(stays, page(t, kube, stays))
	_, err = later.Flush(context.Background())
	require.NoError(t, err)
	assert.Nil(t, page(t, kube, stays), "a page left empty goes")

	kube.ClearActions()
	later.Forget(Key{Namespace: "n", Kind: "FlinkApplication", Name: "never"}, nil)
	_, err = later.Flush(context.Background())
	require.NoError(t, err)
	assert.Empty(t, kube.Actions(), "nothing to forget, nothing written")
}

func TestAnEntryThatDoesNotFitThePageIsRefused(t *testing.T) {
	b := New(kubefake.NewClientset(), nil)
	long := Entry{JobID: "j", Path: "s3://" + string(make([]byte, maxPath)), At: time.Now()}
	assert.False(t, b.Note(Key{Namespace: "n", Kind: "FlinkApplication", Name: "a"}, long, now))
	assert.False(t, Key{Namespace: "n", Kind: "FlinkApplication", Name: fmt.Sprintf("%0250d", 0)}.Usable())
}
