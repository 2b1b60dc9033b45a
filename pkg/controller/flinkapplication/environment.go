package flinkapplication

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/autoscaling"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
	"github.com/flinkfsm/flinkfsm/pkg/controller/kindpass"
)

// Environment is what reconciles share (kindpass.Environment: clients, clock, configuration, the
// caches' readers and what every kind remembers between passes), with what only the FlinkApplication
// kind remembers. Tests build one from fakes; the controller builds one from informers.
type Environment struct {
	kindpass.Environment

	// hashes remembers each application's cluster hash by the resourceVersion it was computed from
	// (object_memory.go).
	hashes clusterHashes
	// scaling keeps the autoscaler's samples of each autoscaled job (package autoscaling).
	scaling autoscaling.Memory
	// quiet remembers each application whose move into Submitting is not written yet
	// (quiet_submission.go).
	quiet sync.Map
}

// Observer reads an application and the objects it owns, normally from informer caches
// (watch.Listers).
type Observer = kindpass.Observer

// SessionObserver reads session clusters and session jobs, normally from informer caches.
type SessionObserver = kindpass.SessionObserver

func (e *Environment) forgetApp(key string) {
	e.Forget(key)
	e.quiet.Delete(key)
	e.scaling.Forget(key)
	e.hashes.forget(key)
}

// clusterHashes remembers each application's cluster hash with the object it was computed from.
// The hash is a function of the object alone (flink.ClusterHash), and an object does not change
// while its resourceVersion stays; computing it (a JSON encoding of the cluster's spec) on every
// pass was a twentieth of what the operator allocated at 10,000 applications, where nearly every
// pass reads an object it has read before.
type clusterHashes struct {
	mu sync.Mutex
	m  map[string]clusterHashOf
}

type clusterHashOf struct {
	uid             types.UID
	resourceVersion string
	hash            string
}

// of is flink.ClusterHash(app), app being the object stored under key as read from the cache.
func (c *clusterHashes) of(key string, app *v1beta1.FlinkApplication) string {
	if app.ResourceVersion == "" { // not read from the API server: nothing to know it by
		return flink.ClusterHash(app)
	}
	c.mu.Lock()
	known, ok := c.m[key]
	c.mu.Unlock()
	if ok && known.uid == app.UID && known.resourceVersion == app.ResourceVersion {
		return known.hash
	}
	hash := flink.ClusterHash(app)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]clusterHashOf{}
	}
	c.m[key] = clusterHashOf{uid: app.UID, resourceVersion: app.ResourceVersion, hash: hash}
	c.mu.Unlock()
	return hash
}

// forget drops what is known of a deleted application.
func (c *clusterHashes) forget(key string) {
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}
