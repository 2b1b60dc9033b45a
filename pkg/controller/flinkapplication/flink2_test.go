package flinkapplication

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A FlinkApplication's programArgs reach its job on Flink 2.x, which has no programArgs and refuses
// a run request that names it, and on 1.x, split the same way (issue 26: the job failed its
// submission on Flink 2.0-2.2).
func TestProgramArgsReachTheJobOnFlink1And2(t *testing.T) {
	for _, version := range []string{"1.20", "2.0", "2.3"} {
		t.Run(version, func(t *testing.T) {
			w := newWorld(t)
			app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
				s.FlinkVersion = version
				s.ProgramArgs = `--input "two words" --output /tmp/out`
			})
			jobs := w.jm(app, app.Status.DeployHash).Jobs()
			require.Len(t, jobs, 1)
			assert.Equal(t, []string{"--input", "two words", "--output", "/tmp/out"}, jobs[0].Args)
		})
	}
}

// spec.programArgsList gives the arguments one per item, never split: an argument with spaces or
// quotes reaches main() as it is written (lyft/flinkk8soperator#268).
func TestProgramArgsListReachesTheJobUnsplit(t *testing.T) {
	w := newWorld(t)
	args := []string{"--sql", `SELECT "a b" FROM t WHERE x = 'y'`, ""}
	app := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkVersion = "2.0"
		s.ProgramArgsList = args
	})
	jobs := w.jm(app, app.Status.DeployHash).Jobs()
	require.Len(t, jobs, 1)
	assert.Equal(t, args, jobs[0].Args)
}

// Flink 2.x answers a job's exceptions without the root exception 1.x reports, only the exception
// history: a job that fails there is explained as on 1.x, once.
func TestFailedJobIsExplainedAlikeOnFlink1And2(t *testing.T) {
	reasons := map[string]string{}
	for _, version := range []string{"1.20", "2.2", "2.3"} {
		w := newWorld(t)
		app := wordcount("wc")
		app.Spec.FlinkVersion = version
		app.Spec.SavepointPath = "file:///checkpoints/savepoints/savepoint-000000-gone"
		w.create(app)
		reasons[version] = w.runUntilPhase("wc", v1beta1.PhaseDeployFailed).Status.Reason
	}
	// Real Flink refuses the run itself, naming the missing savepoint (integ/realflink's recorded answers).
	assert.Contains(t, reasons["1.20"], "java.io.FileNotFoundException: Cannot find checkpoint or savepoint file/directory 'file:///checkpoints/savepoints/savepoint-000000-gone'")
	assert.Equal(t, reasons["1.20"], reasons["2.2"])
	assert.Equal(t, reasons["1.20"], reasons["2.3"])
}

// An update from Flink 1.14 to 1.20 stops the old job speaking 1.14 (a savepoint without a trigger
// id, which 1.14 refuses) and starts the new one on 1.20, from that savepoint.
func TestFlinkUpgradeSpeaksEachClusterItsOwnRelease(t *testing.T) {
	w := newWorld(t)
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) { s.FlinkVersion = "1.14" })
	w.update("wc", func(a *v1beta1.FlinkApplication) {
		a.Spec.FlinkVersion = "1.20"
		a.Spec.Image = "flink-wordcount:2"
	})
	app := w.runUntil("wc", "upgraded", upgradedFrom(old))
	assert.Equal(t, "1.14.0", w.jm(old, old.Status.DeployHash).Release())
	assert.Equal(t, "1.20.0", w.jm(app, app.Status.DeployHash).Release())
	assert.Equal(t, 1, savepointsTaken(w))
	assert.True(t, strings.Contains(w.jm(app, app.Status.DeployHash).Jobs()[0].RestoredFrom, "savepoint-"))
}
