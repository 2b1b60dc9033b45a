package jobstate

import (
	"encoding/json"
	"sync"
)

// RecordedVersions remembers the flinkVersion of each deployment record's spec, by object and
// cluster hash, with the spec it was read from: every pass asks it of the record of the cluster
// it calls (the pass's FlinkVersion), and decoding the whole spec for it each time was a fortieth of
// what the operator allocated. A record's spec is a string the cache shares with every copy of
// the object, so telling it unchanged is a pointer comparison.
type RecordedVersions struct {
	mu sync.Mutex
	m  map[string]map[string]recordedVersion // by object, then cluster hash
}

type recordedVersion struct{ spec, version string }

// maxRecordsRemembered bounds what is kept per object: it has two records at most (stable and
// candidate); the hashes of records gone since are dropped when it is reached.
const maxRecordsRemembered = 4

// Of is the flinkVersion of spec, the spec of the object's record of the cluster with hash; "" if
// it names none or cannot be read.
func (r *RecordedVersions) Of(object, hash, spec string) string {
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

// Forget drops what is known of a deleted object's records.
func (r *RecordedVersions) Forget(object string) {
	r.mu.Lock()
	delete(r.m, object)
	r.mu.Unlock()
}
