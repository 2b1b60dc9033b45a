package suite

import (
	"testing"

	"github.com/flinkfsm/flinkfsm/integ/flinksim"
)

// CheckNoOverlaps fails the test if two jobs of an application were ever alive at once, which for a
// streaming job means duplicated output. A BlueGreen application runs its two versions' jobs at
// once on purpose; a third beside them is never allowed. appKey is the simulator's key of the
// application (namespace/name).
func CheckNoOverlaps(t testing.TB, timeline *flinksim.Timeline, appKey string, blueGreen bool) {
	t.Helper()
	if blueGreen {
		if most := timeline.MostAlive(appKey); most > 2 {
			t.Errorf("%s: %d jobs were alive at once, want at most 2 (the deployed and the updating version)", appKey, most)
		}
		return
	}
	for _, o := range timeline.Overlaps(appKey) {
		t.Errorf("%s: jobs %s (on %s) and %s (on %s) were alive together from %s to %v",
			appKey, o.First.JobID, o.First.JobManager, o.Second.JobID, o.Second.JobManager,
			o.From.Format("15:04:05.000"), o.To)
	}
}
