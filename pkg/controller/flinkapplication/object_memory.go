package flinkapplication

import (
	"encoding/json"
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

// recordedVersions remembers the flinkVersion of each deployment record's spec, by object and
// cluster hash, with the spec it was read from: every pass asks it of the record of the cluster
// it calls (Context.FlinkVersion), and decoding the whole spec for it each time was a fortieth of
// what the operator allocated. A record's spec is a string the cache shares with every copy of
// the object, so telling it unchanged is a pointer comparison.
type recordedVersions struct {
	mu sync.Mutex
	m  map[string]map[string]recordedVersion // by object, then cluster hash
}

type recordedVersion struct{ spec, version string }

// maxRecordsRemembered bounds what is kept per object: it has two records at most (stable and
// candidate); the hashes of records gone since are dropped when it is reached.
const maxRecordsRemembered = 4

// of is the flinkVersion of spec, the spec of the object's record of the cluster with hash; "" if
// it names none or cannot be read.
func (r *recordedVersions) of(object, hash, spec string) string {
	r.mu.Lock()
	known, ok := r.m[object][hash]
	r.mu.Unlock()
	if ok && known.spec == spec {
		return known.version
	}
	var decoded struct {
		FlinkVersion string `json:"flinkVersion"`
	}
	if json.Unmarshal([]byte(spec), &decoded) != nil {
		decoded.FlinkVersion = ""
	}
	r.mu.Lock()
	if r.m == nil {
		r.m = map[string]map[string]recordedVersion{}
	}
	records := r.m[object]
	if records == nil || len(records) >= maxRecordsRemembered {
		records = map[string]recordedVersion{}
		r.m[object] = records
	}
	records[hash] = recordedVersion{spec: spec, version: decoded.FlinkVersion}
	r.mu.Unlock()
	return decoded.FlinkVersion
}

// forget drops what is known of a deleted object's records.
func (r *recordedVersions) forget(object string) {
	r.mu.Lock()
	delete(r.m, object)
	r.mu.Unlock()
}
