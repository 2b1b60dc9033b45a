package flinkapplication

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// Terminal escapes in what a JobManager reports (here its savepoint paths, from a savepoint
// directory a tenant chose) reach status reasons and Events escaped, while the paths a restore
// needs stay exact (issue 25 item 8).
func TestEscapesFromAJobManagerReachPeopleEscaped(t *testing.T) {
	w := newWorld(t)
	const hostile = "file:///checkpoints/sp\x1b[2K\x1b[1A\u202e"
	old := runningWith(t, w, "wc", func(s *v1beta1.FlinkApplicationSpec) {
		s.FlinkConfig["state.savepoints.dir"] = hostile
	})
	w.events()
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	app := w.runUntil("wc", "updated", upgradedFrom(old))

	require.Contains(t, app.Status.JobStatus.RestorePath, "\x1b[2K", "the state the job restored is stored exact")
	require.NotEmpty(t, app.Status.Ledger)
	assert.Contains(t, app.Status.Ledger[len(app.Status.Ledger)-1].Path, "\x1b[2K", "the ledger keeps the path exact")
	for _, text := range append([]string{app.Status.Reason}, w.events()...) {
		assert.False(t, strings.ContainsAny(text, "\x1b\u202e"), "shown raw: %q", text)
	}
	for _, h := range app.Status.History {
		assert.False(t, strings.ContainsAny(h.Reason, "\x1b\u202e"), "shown raw: %q", h.Reason)
	}
	assert.Contains(t, app.Status.Reason, `\x1b[2K`, "and shown escaped")
}
