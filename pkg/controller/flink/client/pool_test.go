package client

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingJobManager answers /overview and counts the connections opened to it.
func countingJobManager(t *testing.T, dials *atomic.Int64, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	if handler == nil {
		handler = func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"taskmanagers":1,"slots-total":1,"slots-available":0,"jobs-running":1}`))
		}
	}
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// A fleet larger than resty's idle pool of 100 for all hosts evicted each JobManager's
// connection before its next poll, so that every poll dialled again.
func TestTheNextPollOfEveryJobManagerOfAFleetReusesItsConnection(t *testing.T) {
	const fleet = 150
	var dials atomic.Int64
	urls := make([]string, fleet)
	for i := range urls {
		urls[i] = countingJobManager(t, &dials, nil).URL
	}
	c := New(Config{IdleConnectionsPerJobManager: 4}, nil)
	ctx := context.Background()
	for round := 0; round < 2; round++ {
		for _, u := range urls {
			_, err := c.GetClusterOverview(ctx, u)
			require.NoError(t, err)
		}
	}
	require.EqualValues(t, fleet, dials.Load(), "one connection per JobManager, reused by its second poll")
}

// A session cluster's JobManager is called by several passes at once; as many connections as were
// in use together stay open for the next round.
func TestConcurrentCallsToOneJobManagerKeepTheirConnections(t *testing.T) {
	const concurrent = 12
	var dials atomic.Int64
	var mu sync.Mutex
	waiting, gate := 0, make(chan struct{})
	srv := countingJobManager(t, &dials, func(w http.ResponseWriter, _ *http.Request) {
		// Hold every call until all of the round's have arrived, so that each uses a connection.
		mu.Lock()
		g := gate
		if waiting++; waiting == concurrent {
			waiting = 0
			close(gate)
			gate = make(chan struct{})
		}
		mu.Unlock()
		<-g
		_, _ = w.Write([]byte(`{"taskmanagers":1,"slots-total":1,"slots-available":0,"jobs-running":1}`))
	})
	c := New(Config{IdleConnectionsPerJobManager: concurrent}, nil)
	for round := 0; round < 2; round++ {
		var done sync.WaitGroup
		for i := 0; i < concurrent; i++ {
			done.Add(1)
			go func() {
				defer done.Done()
				_, err := c.GetClusterOverview(context.Background(), srv.URL)
				assert.NoError(t, err)
			}()
		}
		done.Wait()
	}
	require.LessOrEqual(t, dials.Load(), int64(concurrent), "the second round reuses the first round's connections")
}
