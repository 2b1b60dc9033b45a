package flinkapplication

// Attack review s12 of the Apache migration (nonces, jarURI, convert of application mode and
// blue/green, LastState blue/green savepoints): each test here failed on e8cb0a0.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
	"github.com/flinkfsm/flinkfsm/pkg/cli/convert"
)

// s12Converted is the FlinkApplication `kubectl flink convert` writes of a file of the Apache
// operator's corpus (pkg/cli/convert/testdata/apache).
func s12Converted(t *testing.T, file string) *v1beta1.FlinkApplication {
	t.Helper()
	in, err := os.ReadFile(filepath.Join("..", "..", "cli", "convert", "testdata", "apache", file))
	if err != nil {
		t.Fatal(err)
	}
	out, report, err := convert.Convert(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range report.Warnings {
		t.Logf("convert warning: %s", w)
	}
	for _, doc := range strings.Split(string(out), "---\n") {
		if !strings.Contains(doc, "kind: FlinkApplication") {
			continue
		}
		var app v1beta1.FlinkApplication
		if err := yaml.Unmarshal([]byte(doc), &app); err != nil {
			t.Fatal(err)
		}
		return &app
	}
	t.Fatal("no FlinkApplication written")
	return nil
}

// The Apache operator's own stateless blue/green example (e2e-tests/data/bluegreen-stateless.yaml,
// also the shape of bluegreen-ingress.yaml), converted and applied as the migration guide says. The
// Apache operator promotes the new deployment once it is ready and deletes the old one after the
// 2 s deletion delay, without a savepoint (it takes none for STATELESS). flinkfsm, as converted,
// waits for a checkpoint the job never takes (minCheckpoints defaults to 1, checkpointing is off),
// aborts the new version after abortAfterSeconds 600, and then cannot tear it down: teardownMode
// Savepoint needs a savepoint directory the example does not have. What the user loses: the update
// never happens, and from then on two copies of the job run side by side, each reading the sources
// and writing the sinks, until someone notices the application resting in Teardown.
func TestS12ConvertedApacheStatelessBlueGreenNeverPromotesAndKeepsTwoJobsRunning(t *testing.T) {
	for _, file := range []string{"e2e-tests_data_bluegreen-stateless.yaml", "e2e-tests_data_bluegreen-ingress.yaml"} {
		t.Run(file, func(t *testing.T) {
			w := newWorld(t)
			app := s12Converted(t, file)
			// The world's pod policy allows only the default service account; nothing else is changed.
			app.Spec.ServiceAccountName = ""
			app.Name, app.Generation = "wc", 1
			w.create(app)
			w.runUntilPhase("wc", v1beta1.PhaseRunning)
			old := w.get("wc")
			// Any change of the template is a blue/green transition (here, one more program argument).
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.ProgramArgsList = append(a.Spec.ProgramArgsList, "--sleep2") })

			promoted := func(a *v1beta1.FlinkApplication) bool {
				return a.Status.Phase == v1beta1.PhaseRunning && a.Status.DeployHash != old.Status.DeployHash
			}
			deadline := w.clock.Now().Add(time.Hour)
			for w.clock.Now().Before(deadline) && !promoted(w.get("wc")) {
				_, _ = w.reconcile("wc")
			}
			got := w.get("wc")
			alive := 0
			for _, j := range w.timeline.Jobs(ns + "/wc") {
				if _, ended := j.AliveUntil(); !ended {
					alive++
				}
			}
			if !promoted(got) {
				t.Errorf("an hour after the update the new version is not deployed (the Apache operator promotes it once ready): phase %s, reason %q",
					got.Status.Phase, got.Status.Reason)
			}
			if alive > 1 {
				t.Errorf("%d jobs of the application are still running an hour after the update", alive)
			}
		})
	}
}
