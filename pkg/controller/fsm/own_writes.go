package fsm

import (
	"reflect"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StaleCacheRetry is how soon a pass that found a cache older than our own write tries again.
const StaleCacheRetry = 100 * time.Millisecond

// OwnWrites remembers each object's last status write of this process, by its key
// (kind/namespace/name): a cache that has not caught up with it yet is stale, and the update it
// brings back is only its echo.
type OwnWrites struct {
	// written is the resourceVersion our last status write of the object returned.
	written sync.Map
	// writing holds the objects whose status write is on the wire: its echo may reach the informer
	// before its answer reaches the pass, and is still only the echo.
	writing sync.Map
}

// Stale tells whether the cached object predates our own last status write: acting on it could
// repeat a step already taken, so the pass waits for the cache instead.
func (w *OwnWrites) Stale(key string, obj metav1.Object) bool {
	v, ok := w.written.Load(key)
	if !ok {
		return false
	}
	have, err1 := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	wrote, err2 := strconv.ParseUint(v.(string), 10, 64)
	return err1 == nil && err2 == nil && have < wrote
}

// Begin notes a status write of the object going out; the function it returns notes it ended. Call
// Wrote before that, so that there is no moment when the echo would look foreign.
func (w *OwnWrites) Begin(key string) (end func()) {
	w.writing.Store(key, true)
	return func() { w.writing.Delete(key) }
}

// Wrote remembers the resourceVersion our status write of the object returned.
func (w *OwnWrites) Wrote(key, resourceVersion string) { w.written.Store(key, resourceVersion) }

// Forget drops what is remembered of a deleted object.
func (w *OwnWrites) Forget(key string) { w.written.Delete(key) }

// Echo tells whether an update of the object with this key is only our own last status write
// coming back: its resourceVersion is the one that write returned (or the write is still waiting
// for its answer), and nothing else a pass reads changed with it.
func (w *OwnWrites) Echo(key string, old, new metav1.Object) bool {
	v, ok := w.written.Load(key)
	_, inFlight := w.writing.Load(key)
	return (inFlight || ok && v.(string) == new.GetResourceVersion()) && old.GetGeneration() == new.GetGeneration() &&
		(old.GetDeletionTimestamp() == nil) == (new.GetDeletionTimestamp() == nil) &&
		reflect.DeepEqual(old.GetFinalizers(), new.GetFinalizers()) &&
		reflect.DeepEqual(old.GetLabels(), new.GetLabels()) && reflect.DeepEqual(old.GetAnnotations(), new.GetAnnotations())
}
