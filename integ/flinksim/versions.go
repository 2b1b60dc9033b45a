package flinksim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// What the Flink releases the simulator speaks differ in, for the calls an operator makes. From
// 1.18 on it is read from each release's REST API document (docs/static/generated/
// rest_v1_dispatcher.yml; openapi_matrix_test.go checks the simulator against it); what the
// documents cannot say (how a request body is parsed, the fields before 1.18) is from Flink's
// handler sources (AbstractHandler, the request body classes).

// versionedField is a request body property that only some releases have.
type versionedField struct {
	name string
	// since is the first release with the property ({0, 0}: every one); until the first without
	// it ({0, 0}: none).
	since, until [2]int
}

// requestFieldsByVersion are the properties of each request class that not every release has:
// trigger ids (FLINK-24208), the savepoint format (FLINK-25744) and restoreMode (FLINK-25155) came
// with 1.15, flinkConfiguration with 1.17 (FLINK-29543), claimMode with 1.20 (FLINK-34454), and
// 2.0 removed programArgs (FLINK-36275).
var requestFieldsByVersion = map[string][]versionedField{
	classSavepointTrigger:  {{name: "triggerId", since: [2]int{1, 15}}, {name: "formatType", since: [2]int{1, 15}}},
	classStopWithSavepoint: {{name: "triggerId", since: [2]int{1, 15}}, {name: "formatType", since: [2]int{1, 15}}},
	classJarRun: {
		{name: "restoreMode", since: [2]int{1, 15}},
		{name: "flinkConfiguration", since: [2]int{1, 17}},
		{name: "claimMode", since: [2]int{1, 20}},
		{name: "programArgs", until: [2]int{2, 0}},
	},
}

// Request body classes, as Flink names them in its answers.
const (
	classSavepointTrigger  = "SavepointTriggerRequestBody"
	classStopWithSavepoint = "StopWithSavepointRequestBody"
	classJarRun            = "JarRunRequestBody"
	classCheckpointTrigger = "CheckpointTriggerRequestBody"
	classSavepointDisposal = "SavepointDisposalRequest"
)

// has tells whether the simulated release's request class has a property the simulator's decoding
// struct declares.
func (jm *JobManager) has(class, property string) bool {
	for _, f := range requestFieldsByVersion[class] {
		if f.name != property {
			continue
		}
		if f.since != [2]int{} && !flinkAtLeast(jm.flinkVersion, f.since[0], f.since[1]) {
			return false
		}
		if f.until != [2]int{} && flinkAtLeast(jm.flinkVersion, f.until[0], f.until[1]) {
			return false
		}
	}
	return true
}

// lenientRequests is whether the release ignores request properties it does not know: from 1.20
// on (FLINK-35302) the handlers parse with a mapper that drops them, so that a property a release
// removed (programArgs in 2.x) is lost without a word; before, the strict mapper answers 400.
func (jm *JobManager) lenientRequests() bool { return flinkAtLeast(jm.flinkVersion, 1, 20) }

// decodeRequest parses a request body into into (a struct whose json tags are the class's
// properties in the newest release) as the simulated release does, or says what Flink answers.
// An empty body is {}.
func (jm *JobManager) decodeRequest(class string, body []byte, into any) *response {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(body, &props); err != nil {
		bad := badRequestFormat(class, err)
		return &bad
	}
	known := jsonProperties(into)
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if known[name] && jm.has(class, name) {
			continue
		}
		if !jm.lenientRequests() {
			bad := badRequestFormat(class, fmt.Errorf(`Unrecognized field %q (class %s), not marked as ignorable`, name, class))
			return &bad
		}
		delete(props, name)
	}
	kept, _ := json.Marshal(props)
	if err := json.Unmarshal(kept, into); err != nil {
		bad := badRequestFormat(class, err)
		return &bad
	}
	return nil
}

// jsonProperties are the JSON names of a struct's fields.
func jsonProperties(v any) map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for i := 0; i < t.NumField(); i++ {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}

// notYet is Flink's answer to a route the simulated release does not have yet (the resource
// requirements came with 1.18): nil when it has it.
func (jm *JobManager) notYet(rc *reqCtx, major, minor int) *response {
	if flinkAtLeast(jm.flinkVersion, major, minor) {
		return nil
	}
	missing := routeNotFound(rc.r)
	return &missing
}

// releaseName is the version /config and /overview report: the simulated release with its patch
// version, x.y.0 when none was given; 1.20.0 for the default.
func releaseName(version string) string {
	m := releaseRE.FindStringSubmatch(strings.TrimSpace(version))
	if m == nil {
		return "1.20.0"
	}
	if m[3] == "" {
		m[3] = "0"
	}
	return m[1] + "." + m[2] + "." + m[3]
}

var releaseRE = regexp.MustCompile(`^[vV]?(\d+)[._](\d+)(?:[._](\d+))?`)

// Release is the Flink release the JobManager speaks, as /overview reports it ("2.2.0").
func (jm *JobManager) Release() string { return releaseName(jm.flinkVersion) }
