package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/client/clientset/versioned"
	appinformers "github.com/flinkfsm/flinkfsm/pkg/client/informers/externalversions/app/v1beta1"
)

// apiObject is a FlinkApplication as the API server sends it; poison ones have a parallelism that
// no int32 holds, as the API server stores when the schema does not bound it.
func apiObject(name, resourceVersion string, poison bool) map[string]interface{} {
	parallelism := int64(3)
	if poison {
		parallelism = 1 << 32
	}
	return map[string]interface{}{
		"apiVersion": "flink.k8s.io/v1beta1", "kind": "FlinkApplication",
		"metadata": map[string]interface{}{"name": name, "namespace": ns, "resourceVersion": resourceVersion, "uid": "uid-" + name},
		"spec": map[string]interface{}{"image": "flink:1.20", "jarName": "job.jar", "parallelism": parallelism,
			"flinkConfig": map[string]interface{}{"parallelism.default": 4, "taskmanager.network.memory.fraction": 0.1}},
	}
}

// fakeAPIServer serves FlinkApplications of one namespace: a list, then one watch with the given
// events, held open until the client goes.
type fakeAPIServer struct {
	list    []map[string]interface{}
	events  []map[string]interface{}
	mu      sync.Mutex
	watches int
	// selectors are the label selectors of the requests, in order.
	selectors []string
}

func (s *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/apis/flink.k8s.io/v1beta1/namespaces/"+ns+"/flinkapplications" {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.selectors = append(s.selectors, r.URL.Query().Get("labelSelector"))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Get("watch") != "true" {
		_ = json.NewEncoder(w).Encode(map[string]interface{}{"apiVersion": "flink.k8s.io/v1beta1", "kind": "FlinkApplicationList",
			"metadata": map[string]interface{}{"resourceVersion": "10"}, "items": s.list})
		return
	}
	s.mu.Lock()
	s.watches++
	first := s.watches == 1
	s.mu.Unlock()
	if first {
		for _, e := range s.events {
			_ = json.NewEncoder(w).Encode(e)
		}
	}
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

func watchEvent(typ string, obj map[string]interface{}) map[string]interface{} {
	return map[string]interface{}{"type": typ, "object": obj}
}

func clientFor(t *testing.T, h http.Handler) versioned.Interface {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := versioned.NewForConfig(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	return c
}

// An object that does not decode is left out, with an Event on it, and the others are cached; the
// typed informer the controller used before never synced at all.
func TestInformerSkipsObjectsThatDoNotDecode(t *testing.T) {
	api := &fakeAPIServer{
		list: []map[string]interface{}{apiObject("a", "5", false), apiObject("p", "6", true)},
		events: []map[string]interface{}{
			watchEvent("ADDED", apiObject("b", "11", false)),
			watchEvent("ADDED", apiObject("q", "12", true)),
			// An object that stops decoding leaves the cache, as the next list would leave it out.
			watchEvent("MODIFIED", apiObject("a", "13", true)),
			watchEvent("BOOKMARK", map[string]interface{}{"apiVersion": "flink.k8s.io/v1beta1", "kind": "FlinkApplication",
				"metadata": map[string]interface{}{"resourceVersion": "14"}}),
		},
	}
	c := clientFor(t, api)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	recorder := record.NewFakeRecorder(100)
	skipped := &undecodableReporter{recorder: recorder}
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}

	inf := applicationResource.informer(c, ns, "", indexers, skipped.report)
	go inf.RunWithContext(ctx)
	syncCtx, syncCancel := context.WithTimeout(ctx, 5*time.Second)
	defer syncCancel()
	require.True(t, cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced), "the informer syncs despite the poison object")

	cached := func() []string { return inf.GetStore().ListKeys() }
	require.Eventually(t, func() bool { return fmt.Sprint(cached()) == "["+ns+"/b]" }, 5*time.Second, 10*time.Millisecond,
		"cached: %v", cached())

	// Decoded as the typed client decodes: no kind, flinkConfig numbers as int64 or float64.
	obj, ok, err := inf.GetStore().GetByKey(ns + "/b")
	require.NoError(t, err)
	require.True(t, ok)
	b := obj.(*v1beta1.FlinkApplication)
	assert.Equal(t, int32(3), b.Spec.Parallelism)
	assert.Empty(t, b.Kind)
	assert.Equal(t, v1beta1.FlinkConfig{"parallelism.default": int64(4), "taskmanager.network.memory.fraction": 0.1}, b.Spec.FlinkConfig)

	var events []string
	for len(events) < 3 {
		select {
		case e := <-recorder.Events:
			events = append(events, e)
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d Events: %v", len(events), events)
		}
	}
	// p from the list, then q and a from the watch.
	for _, e := range events {
		assert.Contains(t, e, "Warning Undecodable the operator cannot read this FlinkApplication")
		assert.Contains(t, e, "4294967296", "the Event says what does not decode")
	}

	// A relist meets the poison object again; it is reported once per version.
	lw := applicationResource.listWatch(c.FlinkV1beta1().RESTClient(), ns, "", skipped.report)
	list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	items, err := meta.ExtractList(list)
	require.NoError(t, err)
	require.Len(t, items, 1)
	assert.Equal(t, "a", items[0].(*v1beta1.FlinkApplication).Name)
	assert.Equal(t, "10", list.(*v1beta1.FlinkApplicationList).ResourceVersion, "the list keeps its resourceVersion")
	select {
	case e := <-recorder.Events:
		t.Errorf("reported again: %s", e)
	case <-time.After(100 * time.Millisecond):
	}

	// The typed informer fails its whole list on the one object.
	typed := appinformers.NewFlinkApplicationInformer(clientFor(t, &fakeAPIServer{list: api.list}), ns, 0, indexers)
	go typed.RunWithContext(ctx)
	typedCtx, typedCancel := context.WithTimeout(ctx, time.Second)
	defer typedCancel()
	assert.False(t, cache.WaitForCacheSync(typedCtx.Done(), typed.HasSynced), "the typed informer syncs")
}

// A shard's informer asks the API server for the shard's objects only, in its list and its watch.
func TestInformerListsAndWatchesTheShardOnly(t *testing.T) {
	api := &fakeAPIServer{list: []map[string]interface{}{apiObject("a", "5", false)}}
	c := clientFor(t, api)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	inf := applicationResource.informer(c, ns, "flinkfsm.io/shard=a", cache.Indexers{}, (&undecodableReporter{}).report)
	go inf.RunWithContext(ctx)
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
	require.Eventually(t, func() bool {
		api.mu.Lock()
		defer api.mu.Unlock()
		return api.watches > 0
	}, 5*time.Second, 10*time.Millisecond)
	api.mu.Lock()
	defer api.mu.Unlock()
	require.GreaterOrEqual(t, len(api.selectors), 2)
	for _, sel := range api.selectors {
		assert.Equal(t, "flinkfsm.io/shard=a", sel)
	}
}
