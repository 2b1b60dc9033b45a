package guardian

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/controller/jobs"
)

func TestAStateAnyHolderNamesMayNotGo(t *testing.T) {
	a := Holder{Kind: "FlinkApplication", Name: "a", UID: "1"}
	b := Holder{Kind: "FlinkSessionJob", Name: "b", UID: "2"}
	n := NewNamespace([]References{
		{Holder: a, Paths: []Use{{Name: "s3://sp/1", Why: "its spec names it"}}},
		{Holder: b, Snapshots: []Use{{Name: "handover", Why: "spec.job.restoreSnapshot"}}, HAClusters: []Use{{Name: "b-0badcafe", Why: "its cluster"}}},
	}, []Snapshot{{Name: "handover", Path: "s3://sp/2"}})

	v := n.MayDelete(State{Path: "s3://sp/1"})
	assert.False(t, v.MayGo())
	assert.Equal(t, "s3://sp/1 is still needed by FlinkApplication a (its spec names it)", v.String())

	assert.False(t, n.MayDelete(State{Snapshot: "handover"}).MayGo(), "named by name")
	assert.False(t, n.MayDelete(State{Path: "s3://sp/2", Snapshot: "other"}).MayGo(), "another object showing the state a named one shows")
	assert.False(t, n.MayDelete(State{HACluster: "b-0badcafe"}).MayGo())
	assert.True(t, n.MayDelete(State{Path: "s3://sp/3", Snapshot: "old"}).MayGo())
	assert.True(t, n.MayDelete(State{HACluster: "a-0badcafe"}).MayGo())
	assert.True(t, NewNamespace(nil, nil).MayDelete(State{Path: "s3://sp/1"}).MayGo())
}

func TestAFlinkSnapshotKeepsTheStateItShowsButNotForItself(t *testing.T) {
	n := NewNamespace([]References{
		{Holder: Holder{Kind: SnapshotKind, Name: "taken"}, Paths: []Use{{Name: "s3://sp/1", Why: "it shows this savepoint"}}},
	}, nil)
	assert.True(t, n.MayDelete(State{Path: "s3://sp/1", Snapshot: "taken"}).MayGo(), "the one going does not keep itself")
	assert.False(t, n.MayDelete(State{Path: "s3://sp/1", Snapshot: "twin"}).MayGo(), "another that shows it does")
	assert.False(t, n.MayDelete(State{Path: "s3://sp/1"}).MayGo(), "the ledger's disposal")
}

func TestAJobReplacingAnotherStartsFromNothingOlderThanItsNewestState(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	started := StartState("job-2", "job-2", "s3://sp/stop-of-job-1", t0.Add(time.Minute))
	j := Job{ID: "job-2", StartedFrom: started}
	assert.Equal(t, "s3://sp/stop-of-job-1", j.Floor().Path, "failed before its first checkpoint: what it started from")

	j.Completed = []jobs.StatePoint{{Path: "s3://chk/2", At: t0.Add(2 * time.Minute)}}
	assert.Equal(t, "s3://chk/2", j.Floor().Path)

	assert.Nil(t, StartState("job-1", "job-2", "s3://sp/start-of-job-1", t0), "a record of another job says nothing of this one")
	assert.Nil(t, StartState("job-2", "job-2", "", t0))
	assert.Nil(t, Job{ID: "job-3"}.Floor())
}
