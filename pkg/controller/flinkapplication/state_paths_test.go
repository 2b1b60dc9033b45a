package flinkapplication

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A savepoint's location comes from the JobManager, which runs the tenant's image. One with control
// characters, or kilobytes long, is no path a restore could trust (and cutting it would make it a
// wrong one): the savepoint is recorded as failed, with a reason that says why in one printable
// line, and the path reaches neither status nor the ledger. The job runs on.
func TestAnImplausibleSavepointLocationIsRecordedAsAFailedSavepoint(t *testing.T) {
	for name, dir := range map[string]string{
		"control characters": "file:///checkpoints/sp\x1b[2K\x1b[1A\u202e",
		"kilobytes":          "file:///checkpoints/" + strings.Repeat("deep/", 800),
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) { s.FlinkConfig["state.savepoints.dir"] = dir })
			w.events()
			w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.SavepointTriggerNonce = "first" })
			app := w.runUntil("wc", "savepoint recorded", func(a *v1beta1.FlinkApplication) bool { return len(a.Status.Savepoints) > 0 })

			require.NotEmpty(t, app.Status.Savepoints)
			r := app.Status.Savepoints[0]
			assert.Equal(t, "Failed", r.Result)
			assert.Empty(t, r.Path)
			assert.Contains(t, r.Reason, "no plausible path")
			assert.LessOrEqual(t, len(r.Reason), 700, r.Reason)
			for _, e := range app.Status.Ledger {
				assert.True(t, len(e.Path) < 1024 && !strings.ContainsAny(e.Path, "\x1b\u202e"), "the ledger holds %q", e.Path)
			}
			for _, text := range append([]string{r.Reason, app.Status.Reason}, w.events()...) {
				assert.False(t, strings.ContainsAny(text, "\x1b\u202e"), "shown raw: %q", text)
				assert.Less(t, len(text), 1024, text)
			}
			assert.Equal(t, old.Status.JobStatus.JobID, app.Status.JobStatus.JobID, "the job runs on")
			assert.Equal(t, v1beta1.PhaseRunning, app.Status.Phase)
		})
	}
}
