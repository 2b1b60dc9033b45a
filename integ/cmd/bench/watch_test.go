package main

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A watch whose resourceVersion expired ends the RetryWatcher; the recorder lists again and goes
// on watching instead of missing every later write (the 10,000 runs compact every minute).
func TestTheRecorderListsAgainWhenItsWatchExpires(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	lists := 0
	watchers := make(chan *watch.FakeWatcher, 4)
	var seen []string
	list := func(context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		lists++
		return "10", nil
	}
	watchFrom := func(context.Context, metav1.ListOptions) (watch.Interface, error) {
		w := watch.NewFakeWithChanSize(4, false)
		watchers <- w
		return w, nil
	}
	on := func(_ watch.EventType, app *v1beta1.FlinkApplication) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, app.Name)
	}
	require.NoError(t, follow(ctx, list, watchFrom, on))

	first := <-watchers
	first.Add(&v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Name: "before", ResourceVersion: "11"}})
	first.Error(&metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired})
	var second *watch.FakeWatcher
	select {
	case second = <-watchers:
	case <-time.After(5 * time.Second):
		t.Fatal("no watch after the expired one")
	}
	second.Modify(&v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Name: "after", ResourceVersion: "12"}})
	assert.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 2
	}, 5*time.Second, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"before", "after"}, seen)
	assert.Equal(t, 2, lists, "listed at the start and after the expired watch")
}

// An application deleted while the watch was expired is gone from the record after the list, as
// the waits for a fleet's deletion need.
func TestTheRecorderForgetsWhatItsListNoLongerHas(t *testing.T) {
	r := newRecorder()
	r.observe(watch.Added, &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "kept", ResourceVersion: "1"}}, time.Now())
	r.observe(watch.Added, &v1beta1.FlinkApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "deleted", ResourceVersion: "2"}}, time.Now())
	r.forgetAllBut(map[string]bool{"a/kept": true})
	assert.NotNil(t, r.latest("a/kept"))
	assert.Nil(t, r.latest("a/deleted"))
}
