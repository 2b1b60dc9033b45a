package flinkapplication

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A FlinkApplication's programArgs reach its job on Flink 2.x, which has no programArgs and refuses
// a run request that names it, and on 1.x, split the same way (issue 26: the job failed its
// submission on Flink 2.0-2.2).
func TestProgramArgsReachTheJobOnFlink1And2(t *testing.T) {
	for _, version := range []string{"1.20", "2.0"} {
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
