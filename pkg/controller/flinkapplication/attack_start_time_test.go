package flinkapplication

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

var jobDetailsPath = regexp.MustCompile(`/jobs/[0-9a-f]{32}$`)

// A JobManager whose job details say the job started in the far future (a lie, or a clock
// far ahead; nothing else it says is false) has every savepoint's first send (Flink answers 404 for
// a trigger persisted but not yet sent) taken for "taken over by another JobMaster": no savepoint is
// ever sent; each pass pair records one more Unknowable ledger entry and a Warning
// SavepointInDoubt, and the update never takes its savepoint. A trigger not known to be sent is sent without that check.
func TestAJobManagersFutureStartTimeDoesNotKeepSavepointsFromBeingSent(t *testing.T) {
	w := newWorld(t)
	future := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	w.rewriteGETAnswers(t, jobDetailsPath, func(m map[string]any) { m["start-time"] = future })

	app := runningWith(t, w, "wc", nil)
	jm := w.jm(app, app.Status.DeployHash)
	w.update("wc", func(a *v1beta1.FlinkApplication) { a.Spec.Image = "flink-wordcount:2" })
	for i := 0; i < 40; i++ {
		_, _ = w.reconcile("wc")
		g := w.get("wc")
		b, _ := json.Marshal(g.Status)
		l, _ := json.Marshal(g.Status.Ledger)
		h, _ := json.Marshal(g.Status.History)
		t.Logf("pass %d %s phase %s: status %d bytes, ledger %d entries %d bytes, history %d bytes; sent %d", i, w.clock.Now().Format("15:04:05.0"), g.Status.Phase, len(b), len(g.Status.Ledger), len(l), len(h), jm.SavepointTriggers())
	}
	got := w.get("wc")
	for name, v := range map[string]any{"ledger": got.Status.Ledger, "history": got.Status.History, "savepoints": got.Status.Savepoints, "all": got.Status} {
		b, _ := json.Marshal(v)
		t.Logf("status %s: %d bytes", name, len(b))
	}
	assert.Less(t, func() int { b, _ := json.Marshal(got.Status); return len(b) }(), 64<<10, "status grows without bound")
	inDoubt := 0
	for _, r := range eventReasons(w.events()) {
		if r == "SavepointInDoubt" {
			inDoubt++
		}
	}
	unknowable := 0
	for _, e := range got.Status.Ledger {
		if e.Result != v1beta1.StateCompleted && e.Result != v1beta1.StatePending {
			unknowable++
		}
	}
	t.Logf("phase %s reason %q; savepoints sent %d; SavepointInDoubt events %d; ledger %d entries (%d not completed)",
		got.Status.Phase, got.Status.Reason, jm.SavepointTriggers(), inDoubt, len(got.Status.Ledger), unknowable)
	assert.Positive(t, jm.SavepointTriggers(), "the update's savepoint was never sent")
	assert.Zero(t, inDoubt, "no JobMaster failed over")
}
