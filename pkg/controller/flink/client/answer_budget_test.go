package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One tenant's JobManager cannot make every other tenant's calls wait. Its answer trickles (its
// whole length announced up front, so it holds its share of the answer budget for the call's whole
// timeout), and a second JobManager's large answer waits for room: an ordinary small answer from a
// third must still be read at once, not queued behind the large one. (The soak in make bench found
// the ordinary applications stepping in lockstep with the drip's timeout.)
func TestASmallAnswerDoesNotQueueBehindALargeOneWaitingForRoom(t *testing.T) {
	const drip = 4 << 20 // announced, the most GetJob reads: its cost takes most of the budget
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(drip))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"jid":"`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer slow.Close()
	huge := strings.Repeat("x", 3<<20)
	large := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jid":"` + testJobID + `","name":"` + huge + `","state":"RUNNING","vertices":[]}`))
	}))
	defer large.Close()
	small := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(jobDetailsBody)))
		_, _ = w.Write([]byte(jobDetailsBody))
	}))
	defer small.Close()

	c := newTestClient(Config{GetTimeout: 3 * time.Second})
	ctx := context.Background()
	go func() { _, _ = c.GetJob(ctx, slow.URL, testJobID) }()
	time.Sleep(300 * time.Millisecond) // the trickling answer holds its share
	go func() { _, _ = c.GetJob(ctx, large.URL, testJobID) }()
	time.Sleep(300 * time.Millisecond) // the large answer waits for room

	start := time.Now()
	job, err := c.GetJob(ctx, small.URL, testJobID)
	require.NoError(t, err)
	assert.Equal(t, testJobID, job.JID)
	assert.Less(t, time.Since(start), time.Second, "a small answer is read while a large one waits for room")
}
