package guardian

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A savepoint or checkpoint asked for whose result the owner does not know yet may be its job's
// newest state: every path Flink would give it is needed until the answer comes (explorer seed
// 67000854: a FlinkSnapshot naming such a savepoint was deleted and its storage disposed of).
func TestAStateAJobMayHaveCompletedUnreadIsNeeded(t *testing.T) {
	job := "69bc84498fbda379b0db348dd7902bea"
	app := References{Holder: Holder{Kind: "FlinkApplication", Name: "gamma"}, Pending: []Use{{Name: job, Why: "pending"}}}
	g := NewNamespace([]References{app}, nil)
	for _, path := range []string{
		"file:/checkpoints/savepoints/savepoint-69bc84-9a0d5a8e452b",
		"s3://b/sp/savepoint-69bc84-9a0d5a8e452b/",
		"s3://b/sp/savepoint-69bc84-9a0d5a8e452b/_metadata",
		"file:/checkpoints/checkpoints/" + job + "/chk-7",
	} {
		assert.False(t, g.MayDelete(State{Path: path, Snapshot: "user-3"}).MayGo(), path)
	}
	for _, path := range []string{
		"file:/checkpoints/savepoints/savepoint-abf320-9bcbfe4ba001",
		"file:/checkpoints/checkpoints/69bc84498fbda37930bc99d962e2ee2f/chk-1",
	} {
		assert.True(t, g.MayDelete(State{Path: path}).MayGo(), path)
	}
}

// A path some holder's records (its status, which only the operator writes) give to a known state is
// not the pending one's result: retention may dispose of it while a newer savepoint is on its way.
// What a FlinkSnapshot shows is no record (attack review s13: a tenant's annotation, or a snapshot
// the operator made before the status recording its result was written, let the result go).
func TestAStateAlreadyRecordedIsNotHeldByAPendingOne(t *testing.T) {
	job := "69bc84498fbda379b0db348dd7902bea"
	own, neighbours, registered := "file:/sp/savepoint-69bc84-000000000001", "file:/sp/savepoint-69bc84-000000000002", "file:/sp/savepoint-69bc84-000000000003"
	app := References{Holder: Holder{Kind: "FlinkApplication", Name: "gamma"}, Pending: []Use{{Name: job, Why: "pending"}}, Recorded: []string{own}}
	other := References{Holder: Holder{Kind: "FlinkApplication", Name: "namesake"}, Recorded: []string{neighbours}}
	g := NewNamespace([]References{app, other}, []Snapshot{{Name: "user-3", Path: registered}})
	assert.True(t, g.MayDelete(State{Path: own}).MayGo())
	assert.True(t, g.MayDelete(State{Path: neighbours}).MayGo(), "another holder's record of the path")
	v := g.MayDelete(State{Path: registered, Snapshot: "user-3"})
	assert.False(t, v.MayGo())
	assert.True(t, v.OnlyUntilAnswered(), "asked again once the answer is read, not given up")
}
