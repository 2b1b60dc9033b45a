package realflink

import (
	"bufio"
	"encoding/json"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
)

var update = flag.Bool("update", false, "write what real Flink answered into testdata/answers (with "+RealFlinkEnv+")")

// diffReleases are the releases whose real answers are recorded under testdata/answers.
var diffReleases = []string{"1.20.5", "2.3.0"}

func goldenPath(release string) string {
	return filepath.Join("testdata", "answers", release+".json")
}

// Real Flink's answers to every call of the operator's client, recorded as shapes. With -update the
// recording replaces the golden file the simulator is compared against; without, a recording that
// no longer matches the golden file fails, so a change in what Flink answers is seen.
func TestRealFlinkAnswersAreRecorded(t *testing.T) {
	eachRelease(t, func(t *testing.T, d Dist, jar string) {
		began := time.Now()
		c := Start(t, d, Options{Slots: 4})
		got := recordScenario(t, diffTarget{url: c.URL, release: d.Version, savepointDir: c.SavepointDir, jar: jar, checkpointEvery: "2s"})
		t.Logf("Flink %s recorded in %s, %s", d.Version, time.Since(began).Round(time.Millisecond), c.Memory())
		if *update {
			data, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(goldenPath(d.Version), append(data, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want := readGolden(t, d.Version)
		for _, diff := range compareRecordings(want, got) {
			t.Errorf("real Flink now answers otherwise: %s", diff)
		}
	})
}

// The simulator, configured as each recorded release, answers every call of the operator's client
// as real Flink did: same statuses, same fields of the same types, same states and exception
// classes. The differences real Flink has and the simulator is allowed to keep are listed, each
// with its reason, in testdata/answers/accepted-differences.txt.
func TestSimulatorAnswersEveryClientCallAsRealFlink(t *testing.T) {
	accepted := readAccepted(t)
	for _, release := range diffReleases {
		t.Run(release, func(t *testing.T) {
			t.Parallel() // each waits on checkpoints every 2 s and a 3 s cache, as real Flink's
			want := readGolden(t, release)
			jm := flinksim.NewJobManager(flinksim.Options{
				FlinkVersion: release, TaskManagers: 1, SlotsPerTaskManager: 4,
				Storage: flinksim.NewStorage(),
				// Flink's REST handlers answer from a copy of the job kept web.refresh-interval (3 s).
				Timings: flinksim.Timings{JobCacheTTL: 3 * time.Second},
				FlinkConfig: map[string]string{
					"execution.checkpointing.dir":           "file:///flink/checkpoints",
					"execution.checkpointing.savepoint-dir": "file:///flink/savepoints",
				},
			})
			// The test job's graph: its source, keyed (HASH) into the counter and its sink.
			if err := jm.SetLoad(flinksim.Load{Vertices: []flinksim.LoadVertex{
				{Name: "Source: sequence", Capacity: 10000, UncountedReads: true},
				{Name: "keyed-counter -> discard: Writer", Capacity: 10000},
			}, Input: flinksim.Constant(50)}); err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(jm.Handler())
			defer srv.Close()
			jar := filepath.Join(t.TempDir(), "flinkfsm-test-job.jar")
			if err := os.WriteFile(jar, []byte("PK\x05\x06"+strings.Repeat("\x00", 18)), 0o644); err != nil {
				t.Fatal(err)
			}
			got := recordScenario(t, diffTarget{url: srv.URL, release: release, savepointDir: "/flink/savepoints", jar: jar, checkpointEvery: "2s",
				incompatible: func(on bool) { jm.SetFaults(flinksim.Faults{UnmappableRestores: on}) }})
			seen := map[string]bool{}
			for _, diff := range compareRecordings(want, got) {
				if accepted[release+" "+diff] || accepted["* "+diff] {
					seen[release+" "+diff], seen["* "+diff] = true, true
					continue
				}
				t.Errorf("%s", diff)
			}
			for k := range accepted {
				if !seen[k] && (strings.HasPrefix(k, release+" ") || strings.HasPrefix(k, "* ")) {
					seen[k] = true
					t.Logf("accepted difference not seen this run (fixed, or timing): %s", k)
				}
			}
		})
	}
}

func readGolden(t *testing.T, release string) recording {
	t.Helper()
	data, err := os.ReadFile(goldenPath(release))
	if err != nil {
		t.Fatalf("%v: record it with %s=%q go test ./integ/realflink -run TestRealFlinkAnswersAreRecorded -update", err, RealFlinkEnv, release)
	}
	var r recording
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// readAccepted reads the differences the simulator may keep: "<release or *> <difference>" a line;
// "#" lines say why.
func readAccepted(t *testing.T) map[string]bool {
	f, err := os.Open(filepath.Join("testdata", "answers", "accepted-differences.txt"))
	if os.IsNotExist(err) {
		return map[string]bool{}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); line != "" && !strings.HasPrefix(line, "#") {
			out[line] = true
		}
	}
	return out
}
