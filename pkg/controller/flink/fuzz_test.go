package flink

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// The fuzz targets run their seed corpus with every `go test`; `make fuzz` runs each for longer.

// A spec's hash must not depend on how it travelled: decoding what the API server stores and
// encoding it again gives the same hash, or a restarted operator would redeploy every application.
func FuzzClusterHashIsStableAcrossAJSONRoundTrip(f *testing.F) {
	for _, seed := range []string{
		`{"image":"flink:1.20","jarName":"a.jar","parallelism":3}`,
		`{"image":"x","flinkConfig":{"a":1,"b":1.5,"c":"d","e":true},"taskManagerConfig":{"taskSlots":2}}`,
		`{"image":"x","flinkConfig":{"n":1e21,"m":-0.0,"big":12345678901234567890}}`,
		`{"image":"x","programArgs":"--a b","restartNonce":"1","blueGreen":{"promotion":"Auto"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, specJSON []byte) {
		var spec v1beta1.FlinkApplicationSpec
		if json.Unmarshal(specJSON, &spec) != nil {
			return
		}
		app := &v1beta1.FlinkApplication{Spec: spec}
		first := ClusterHash(app)
		b, err := json.Marshal(spec)
		if err != nil {
			t.Skip("not encodable")
		}
		var again v1beta1.FlinkApplicationSpec
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("re-decoding %s: %v", b, err)
		}
		if second := ClusterHash(&v1beta1.FlinkApplication{Spec: again}); second != first {
			t.Fatalf("hash %s became %s across a round trip of %s", first, second, specJSON)
		}
	})
}

// Whatever flinkConfig holds, rendering never panics, and when it succeeds every key the operator
// owns reads, as Flink parses the lines, exactly as the operator set it.
func FuzzRenderFlinkConfigKeepsOwnedKeys(f *testing.F) {
	for _, seed := range [][2]string{
		{"rest.port", "1"}, {"rest.port ", "1"}, {" rest.port", "1"}, {"rest.port#", "1"}, {"a: rest.port", "1"},
		{"jobmanager.rpc.address", "evil"}, {"high-availability.type", "kubernetes"}, {"a", "b\nrest.port: 1"},
		{"kubernetes.cluster-id", "shared"}, {"taskmanager.numberOfTaskSlots", "2"},
	} {
		f.Add(seed[0], seed[1], false)
		f.Add(seed[0], seed[1], true)
	}
	f.Fuzz(func(t *testing.T, key, value string, ha bool) {
		app := testApp()
		if ha {
			app.Spec.FlinkConfig["high-availability.type"] = "kubernetes"
		}
		app.Spec.FlinkConfig[key] = value
		jm, tm, err := RenderFlinkConfig(app, "0a1b2c3d")
		if err != nil {
			return
		}
		// What the operator owns differs with and without HA, which the fuzzed key may turn on.
		conf, _ := app.Spec.FlinkConfig.Strings()
		clean := testApp()
		if highAvailability(conf) {
			clean.Spec.FlinkConfig["high-availability.type"] = "kubernetes"
		}
		wantJM, wantTM, err := RenderFlinkConfig(clean, "0a1b2c3d")
		if err != nil {
			t.Fatal(err)
		}
		for name, pair := range map[string][2]string{"jobmanager": {jm, wantJM}, "taskmanager": {tm, wantTM}} {
			got, want := flinkParse(pair[0]), flinkParse(pair[1])
			for owned := range ownedKeys {
				if w, set := want[owned]; set && got[owned] != w {
					t.Fatalf("%s: flinkConfig %q: %q makes Flink read %s = %q, want %q", name, key, value, owned, got[owned], w)
				}
			}
		}
	})
}

// flinkParse reads "key: value" lines as Flink's legacy parser does: a "#" starts a comment, a line
// splits at its first ": ", keys and values are trimmed, a later line wins.
func flinkParse(lines string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(lines, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out
}

// Whatever the spec says, rendering a cluster never panics and never asks for fewer than one
// JobManager or TaskManager.
func FuzzRenderClusterReplicas(f *testing.F) {
	f.Add(int32(3), int32(2), int32(1))
	f.Add(int32(2147483647), int32(2), int32(1))
	f.Add(int32(0), int32(0), int32(0))
	f.Add(int32(-5), int32(-1), int32(-3))
	f.Fuzz(func(t *testing.T, parallelism, slots, jobManagers int32) {
		app := testApp()
		app.Spec.Parallelism = parallelism
		app.Spec.TaskManagerConfig.TaskSlots = &slots
		app.Spec.JobManagerConfig.Replicas = &jobManagers
		c, err := RenderCluster(app, "0a1b2c3d", "")
		if err != nil {
			return
		}
		if *c.JobManager.Spec.Replicas < 1 || *c.TaskManager.Spec.Replicas < 1 {
			t.Fatalf("parallelism %d, slots %d, JobManagers %d: %d JobManagers, %d TaskManagers", parallelism, slots, jobManagers,
				*c.JobManager.Spec.Replicas, *c.TaskManager.Spec.Replicas)
		}
	})
}
