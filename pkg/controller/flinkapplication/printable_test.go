package flinkapplication

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Terminal escapes in what a JobManager reports (here its savepoint paths, from a savepoint
// directory a tenant chose) reach status reasons and Events escaped (issue 25 item 8). A path with
// them is no path a restore could trust, nor could it be stored escaped (another path): the
// update's savepoint is refused, recorded as failed, and the job is updated from its newest
// checkpoint instead; no such path reaches status or the ledger (issue 55).
func TestEscapesFromAJobManagerReachPeopleEscaped(t *testing.T) {
	w := newWorld(t)
	const hostile = "file:///checkpoints/sp\x1b[2K\x1b[1A\u202e"
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkConfig["state.savepoints.dir"] = hostile
	})
	w.events()
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntil("wc", "updated", upgradedFrom(old))

	assert.Contains(t, app.Status.JobStatus.RestorePath, "/chk-", "updated from the newest checkpoint")
	require.NotEmpty(t, app.Status.Savepoints)
	refused := app.Status.Savepoints[len(app.Status.Savepoints)-1]
	assert.Equal(t, "Failed", refused.Result)
	assert.Contains(t, refused.Reason, `no plausible path`)
	assert.Contains(t, refused.Reason, `\x1b[2K`, "the path shown escaped, for people to find it by")
	for _, e := range app.Status.Ledger {
		assert.False(t, strings.ContainsAny(e.Path, "\x1b\u202e"), "stored: %q", e.Path)
	}
	events := w.events()
	for _, text := range append([]string{app.Status.Reason, refused.Reason}, events...) {
		assert.False(t, strings.ContainsAny(text, "\x1b\u202e"), "shown raw: %q", text)
	}
	for _, h := range app.Status.History {
		assert.False(t, strings.ContainsAny(h.Reason, "\x1b\u202e"), "shown raw: %q", h.Reason)
	}
	assert.Contains(t, strings.Join(events, "\n"), `\x1b[2K`, "and shown escaped")
}
