package ledger

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/flinkfsm/flinkfsm/pkg/apis/app/v1beta1"
)

// A state Flink could not find is marked gone whether or not the ledger held an entry of it.
func TestAMissingStateIsMarkedGoneAlsoWhenTheLedgerDoesNotNameIt(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var entries []v1beta1.StateEntry
	l := Of(&entries)
	l.RecordMissing("file:/cp/0badcafe/chk-9", now)
	assert.True(t, l.IsGone("file:/cp/0badcafe/chk-9"))
	assert.Equal(t, v1beta1.StateCheckpoint, entries[0].Purpose)
	assert.Equal(t, "0badcafe", entries[0].JobID)
	l.RecordMissing("file:/sp/savepoint-1", now)
	assert.True(t, l.IsGone("file:/sp/savepoint-1"))
	assert.True(t, l.IsSavepoint("file:/sp/savepoint-1"))
	l.RecordMissing("file:/cp/0badcafe/chk-9", now)
	assert.Len(t, entries, 2, "a path marked once is not added again")
}
