package jobstate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A record's flinkVersion is read from the spec it has now: a new spec under the same hash is read
// again, and what is kept per object stays bounded.
func TestRecordedVersionsFollowTheSpec(t *testing.T) {
	var r RecordedVersions
	spec := `{"image":"a","flinkVersion":"1.18"}`
	assert.Equal(t, "1.18", r.Of("app", "h1", spec))
	assert.Equal(t, 0, int(testing.AllocsPerRun(10, func() { r.Of("app", "h1", spec) })), "a known spec is not decoded again")
	assert.Equal(t, "1.20", r.Of("app", "h1", `{"image":"a","flinkVersion":"1.20"}`))
	assert.Equal(t, "", r.Of("app", "h2", `{"image":"b"}`))
	assert.Equal(t, "", r.Of("app", "h3", `not json`))
	for i := range 10 {
		r.Of("app", fmt.Sprint("old", i), spec)
	}
	assert.LessOrEqual(t, len(r.m["app"]), maxRecordsRemembered)
	r.Forget("app")
	assert.Empty(t, r.m)
}
