package flinkapplication

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/controller/flink"
)

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
