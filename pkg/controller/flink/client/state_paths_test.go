package client

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The paths a JobManager answers for savepoints and checkpoints are taken only when they are
// plausible ones: a savepoint at any other location has failed, with the reason; a checkpoint's
// other path reads as a refusal, which no restore takes for a path. Flink's own paths, and its
// "<checkpoint-not-externally-addressable>", pass as they are.
func TestImplausibleStatePathsAreRefusedWhereTheyEnter(t *testing.T) {
	good := "s3://bucket/flink/savepoints/savepoint-0a1b2c-0123456789ab"
	for path, refused := range map[string]string{
		good: "",
		"<checkpoint-not-externally-addressable>":                  "",
		"hdfs:///flink/chk-7/日本/café":                              "",
		"s3://bucket/sp\x1b[2K\x1b[1Agood":                         "U+001B at byte 14",
		"s3://bucket/\u202egnp.exe":                                "U+202E at byte 12",
		"s3://bucket/line\nforged":                                 "U+000A at byte 16",
		"s3://bucket/\ufffd":                                       "U+FFFD at byte 12",
		"s3://bucket/" + strings.Repeat("a", maxStatePath-12):      "",
		"s3://bucket/" + strings.Repeat("a", maxStatePath-12+1):    "1025 bytes long, more than the 1024",
		"s3://bucket/" + strings.Repeat("deep/", 30_000) + "chk-1": "150017 bytes long",
	} {
		quoted, _ := json.Marshal(path)
		_, srv := newFakeJobManager(t, "", map[string][]reply{
			"GET /jobs/" + testJobID + "/savepoints/" + testTriggerID: {{status: 200,
				body: `{"status":{"id":"COMPLETED"},"operation":{"location":` + string(quoted) + `}}`}},
			"GET /jobs/" + testJobID + "/checkpoints": {{status: 200, body: `{"latest":{"completed":{"id":7,"status":"COMPLETED",` +
				`"external_path":` + string(quoted) + `},"restored":{"id":7,"external_path":` + string(quoted) + `}},` +
				`"history":[{"id":7,"status":"COMPLETED","external_path":` + string(quoted) + `}]}`}},
			"GET /jobs/" + testJobID + "/checkpoints/details/7": {{status: 200, body: `{"id":7,"status":"COMPLETED","external_path":` + string(quoted) + `}`}},
		})
		c := newTestClient(DefaultConfig())
		sp, err := c.GetSavepointStatus(context.Background(), srv.URL, testJobID, testTriggerID)
		require.NoError(t, err)
		stats, err := c.GetCheckpoints(context.Background(), srv.URL, testJobID)
		require.NoError(t, err)
		details, err := c.GetCheckpointDetails(context.Background(), srv.URL, testJobID, 7)
		require.NoError(t, err)
		paths := []string{stats.Latest.Completed.ExternalPath, stats.Latest.Restored.ExternalPath, stats.History[0].ExternalPath, details.ExternalPath}
		if refused == "" {
			assert.True(t, sp.Succeeded())
			assert.Equal(t, path, sp.Location)
			for _, p := range paths {
				assert.Equal(t, path, p)
			}
			continue
		}
		assert.True(t, sp.Failed(), "a savepoint at %.40q", path)
		assert.Empty(t, sp.Location)
		assert.Contains(t, sp.FailureCause, refused)
		assert.Contains(t, sp.FailureCause, "no plausible path")
		assert.Less(t, len(sp.FailureCause), 300)
		assert.Equal(t, sp.FailureCause, Excerpt(sp.FailureCause), "one printable line")
		for _, p := range paths {
			assert.True(t, strings.HasPrefix(p, "<refused: "), p)
			assert.Contains(t, p, refused)
		}
	}
}
